package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	pb "americansniff/sniff/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// streamSeat is one seat a Play stream plays: its token and its policy (nil: the stream
// options' policyFor, once the stream names the seat).
type streamSeat struct {
	matchID string
	token   string
	policy  policy
}

type seatKey struct {
	matchID string
	seat    uint32
}

// matchSeen is what the client has seen of one match through any of its seats and streams:
// each event once (one sent again after a resume, or to a second seat, is not).
type matchSeen struct {
	matchID      string
	seats        int
	rounds       int
	moveCount    uint32 // after the last action seen: what a new stream resumes from
	nextSequence uint64
	decisions    int
	actions      []string
	end          *pb.MatchEnd
}

func (m *matchSeen) note(event *pb.MatchEvent) {
	if event.GetSequence() < m.nextSequence {
		return
	}
	m.nextSequence = event.GetSequence() + 1
	switch {
	case event.GetMatchCreated() != nil:
		m.seats = int(event.GetMatchCreated().GetSeatCount())
	case event.GetRoundDealt() != nil:
		m.rounds++
	case event.GetActionApplied() != nil:
		a := event.GetActionApplied()
		m.moveCount = a.GetMoveCount()
		m.actions = append(m.actions, a.GetMove().GetNotation())
	case event.GetMatchEnded() != nil:
		m.end = event.GetMatchEnded().GetMatchEnd()
	}
}

// errRefused is a PlayError: a bot answers only its own decisions with legal moves, so a
// refusal is a bug of the bot or of the service, never a normal outcome.
var errRefused = errors.New("an answer was refused")

// streamOptions says how a stream player behaves beyond its seats.
type streamOptions struct {
	dropAfter int           // cancel the first stream after this many answers, then resume (tests)
	retries   int           // reconnections after UNAVAILABLE, at most, in a row
	backoff   time.Duration // the first pause before reconnecting; doubled each time
	timeout   time.Duration // the whole play's deadline
	think     time.Duration // a pause before each move: a bot that thinks (tests, pacing)
	// policyFor is the policy of a seat given without one (a token whose seat the stream
	// names only when it opens).
	policyFor func(seat uint32) policy
	// onUpdate, when set, sees each update as it is handed over, with the time it was.
	onUpdate func(update *pb.PlayUpdate, at time.Time)
	// onChoice, when set, is told how long each policy's choice took.
	onChoice func(took time.Duration)
}

// playSeats plays `seats` over one Play stream until each of their matches is over (the
// server then ends the stream with OK). When the stream fails with UNAVAILABLE (a restarting
// service, a dropped connection), a new stream resumes every unfinished match from the last
// action seen, as analysis/remote_play.py's play_stream does when given `seen`. Returns what
// was seen of each match, in the order of `seats`.
func playSeats(ctx context.Context, client pb.SniffServiceClient, seats []streamSeat, opts streamOptions) ([]*matchSeen, int, error) {
	seen := map[string]*matchSeen{}
	var order []*matchSeen
	for _, s := range seats {
		if _, ok := seen[s.matchID]; !ok {
			m := &matchSeen{matchID: s.matchID}
			seen[s.matchID] = m
			order = append(order, m)
		}
	}
	if opts.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.timeout)
		defer cancel()
	}
	players := map[seatKey]*seatPlayer{} // kept across streams: each seat's generator goes on
	streams, failures := 0, 0
	pause := opts.backoff
	for {
		var open []streamSeat
		for _, s := range seats {
			if seen[s.matchID].end == nil {
				open = append(open, s)
			}
		}
		if len(open) == 0 {
			return order, streams, nil
		}
		dropAfter := 0
		if streams == 0 {
			dropAfter = opts.dropAfter
		}
		streams++
		answered, err := oneStream(ctx, client, open, seen, players, dropAfter, &opts)
		switch {
		case err == nil:
			if dropAfter == 0 {
				for _, s := range open {
					if seen[s.matchID].end == nil {
						return order, streams, fmt.Errorf("the stream ended before match %s did", s.matchID)
					}
				}
			}
		case status.Code(err) == codes.Unavailable && failures < opts.retries:
			failures++
			time.Sleep(pause)
			pause *= 2
			continue
		default:
			return order, streams, err
		}
		if answered > 0 {
			failures, pause = 0, opts.backoff
		}
	}
}

// oneStream opens one Play stream for `seats`, each resuming from the last action seen of its
// match, and answers its decisions until the server ends it (nil), it fails (its status), or,
// with dropAfter > 0, the client has sent that many answers and cancels it (nil). Returns the
// number of answers sent.
func oneStream(parent context.Context, client pb.SniffServiceClient, seats []streamSeat, seen map[string]*matchSeen, players map[seatKey]*seatPlayer, dropAfter int, opts *streamOptions) (int, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	stream, err := client.Play(ctx)
	if err != nil {
		return 0, err
	}
	open := &pb.PlayOpen{}
	for _, s := range seats {
		resume := seen[s.matchID].moveCount
		open.Seats = append(open.Seats, &pb.PlaySeat{MatchId: s.matchID, Token: s.token, ResumeMoveCount: &resume})
	}
	if err := stream.Send(&pb.PlayRequest{Kind: &pb.PlayRequest_Open{Open: open}}); err != nil {
		return 0, recvError(stream, err)
	}
	answers := 0
	for {
		response, err := stream.Recv()
		if err == io.EOF {
			return answers, stream.CloseSend()
		}
		if err != nil {
			return answers, err
		}
		var batch []*pb.PlayAnswer // the answers to one message's decisions go back as one
		for _, update := range response.GetUpdates() {
			if opts.onUpdate != nil {
				opts.onUpdate(update, time.Now())
			}
			key := seatKey{update.GetMatchId(), update.GetSeat()}
			switch kind := update.GetKind().(type) {
			case *pb.PlayUpdate_Opened:
				if _, ok := players[key]; !ok {
					p := seats[kind.Opened.GetOpenIndex()].policy
					if p == nil {
						p = opts.policyFor(update.GetSeat())
					}
					players[key] = &seatPlayer{policy: p}
				}
			case *pb.PlayUpdate_Event:
				seen[update.GetMatchId()].note(kind.Event)
			case *pb.PlayUpdate_Decision:
				seen[update.GetMatchId()].decisions++
				if opts.think > 0 && kind.Decision.GetMove() != nil {
					time.Sleep(opts.think)
				}
				batch = append(batch, players[key].answer(update, kind.Decision, opts.onChoice))
			case *pb.PlayUpdate_Error:
				return answers, fmt.Errorf("%w: match %s seat %d: %v", errRefused, update.GetMatchId(), update.GetSeat(), kind.Error)
			}
		}
		if len(batch) == 0 {
			continue
		}
		request := &pb.PlayRequest{Kind: &pb.PlayRequest_Answer{Answer: batch[0]}}
		if len(batch) > 1 {
			request = &pb.PlayRequest{Kind: &pb.PlayRequest_Answers{Answers: &pb.PlayAnswers{Answers: batch}}}
		}
		if err := stream.Send(request); err != nil {
			return answers, recvError(stream, err)
		}
		answers += len(batch)
		if dropAfter > 0 && answers >= dropAfter {
			return answers, nil // the deferred cancel drops the stream mid-match
		}
	}
}

// recvError is the stream's status after a failed Send (Send returns io.EOF; Recv tells why).
func recvError(stream pb.SniffService_PlayClient, err error) error {
	if err != io.EOF {
		return err
	}
	for {
		if _, rerr := stream.Recv(); rerr != nil {
			if rerr == io.EOF {
				return errors.New("the service closed the stream")
			}
			return rerr
		}
	}
}

// seatPlayer is one seat's policy and its last answer, over every stream that plays the seat.
type seatPlayer struct {
	policy policy
	last   *pb.PlayAnswer
}

// answer is the seat's answer to one decision: the deal it asks for, or its policy's move.
// A decision sent again (by a new stream, when the answer sent on a lost one was not
// applied) gets the same answer again, not a new choice: the policy's generator draws once
// per decision, as the same bot's does in process, and if the lost answer had been applied
// after all, the server acknowledges the repeat as a duplicate.
func (s *seatPlayer) answer(update *pb.PlayUpdate, decision *pb.PlayDecision, onChoice func(time.Duration)) *pb.PlayAnswer {
	if s.last != nil && s.last.GetMoveCount() == decision.GetMoveCount() && (s.last.GetDeal() != nil) == (decision.GetDeal() != nil) {
		return s.last
	}
	s.last = answerTo(update, decision, s.policy, onChoice)
	return s.last
}

// answerTo is a new answer to one decision: the deal it asks for, or the policy's move.
func answerTo(update *pb.PlayUpdate, decision *pb.PlayDecision, p policy, onChoice func(time.Duration)) *pb.PlayAnswer {
	answer := &pb.PlayAnswer{MatchId: update.GetMatchId(), Seat: update.GetSeat(), MoveCount: decision.GetMoveCount()}
	if deal := decision.GetDeal(); deal != nil {
		answer.Action = &pb.PlayAnswer_Deal{Deal: &pb.PlayDeal{RoundIndex: deal.GetRoundIndex()}}
		return answer
	}
	move := decision.GetMove()
	t0 := time.Now()
	chosen := move.GetMoves()[p.choose(move.GetState(), move.GetMoves())]
	if onChoice != nil {
		onChoice(time.Since(t0))
	}
	answer.Action = &pb.PlayAnswer_Notation{Notation: chosen.GetNotation()}
	return answer
}
