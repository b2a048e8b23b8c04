-- The record of journals salvaged into this log (`sniff recover --salvage`).
--
-- Created the first time a damaged journal is salvaged, so that a log that was
-- never salvaged keeps exactly the tables of its schema version and every
-- release can still read it; readers look for the table before they read it.
-- One row per salvage: the damaged journal is kept, renamed, at `journal`.

CREATE TABLE IF NOT EXISTS salvages (
    salvaged_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    journal         VARCHAR     NOT NULL,  -- where the damaged journal was moved
    damaged_at      BIGINT      NOT NULL,  -- byte offset of the first damage in it
    loaded          INTEGER     NOT NULL,  -- intact records loaded into the log
    unloadable      INTEGER     NOT NULL,  -- intact records after the damage whose
                                           -- match's sequence had a hole: not loaded
    match_ids       VARCHAR[]   NOT NULL   -- every match that may have lost events:
                                           -- those with records in the journal and
                                           -- those in play when it was salvaged
);
