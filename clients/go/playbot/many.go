package main

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	pb "americansniff/sniff/v1"
)

// botRun is what one bot (one seat on its own stream) measured.
type botRun struct {
	seen       []*matchSeen
	roundTrips []float64
	choices    []float64
	err        error
}

// runMany is the many-bots mode: -bots bots, each one seat of a 2-seat match on its own Play
// stream, the streams spread over -conns connections. Each decision's round trip is timed as
// scripts/bench_play_many.py times it: from the moment the bot's stream hands it the decision
// to the moment the same stream hands it the `answered` reply to its answer (the bot's choice,
// the send, the server's read, apply and write, and the client's read; deal decisions count).
func runMany(ctx context.Context, c *config, out *json.Encoder) error {
	var clients []pb.SniffServiceClient
	for i := 0; i < c.conns || i == 0; i++ {
		conn, err := c.dial()
		if err != nil {
			return err
		}
		defer conn.Close()
		clients = append(clients, pb.NewSniffServiceClient(conn))
	}
	var seats []streamSeat
	for i := 0; i < c.bots/2; i++ {
		m, err := c.create(ctx, clients[i%len(clients)], 2, c.seed+uint64(i))
		if err != nil {
			return err
		}
		seats = append(seats, c.seatsOf(m)...)
	}
	if err := c.waitForGo(out); err != nil {
		return err
	}
	cpu0, t0 := cpuSeconds(), time.Now()
	runs := make([]botRun, len(seats))
	var wg sync.WaitGroup
	for i := range seats {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			runs[i] = playTimed(ctx, clients[i%len(clients)], seats[i], c.stream)
		}(i)
	}
	wg.Wait()
	seconds, cpu := time.Since(t0).Seconds(), cpuSeconds()-cpu0
	var trips, choices []float64
	var moves uint32
	for i, r := range runs {
		if r.err != nil {
			return r.err
		}
		trips = append(trips, r.roundTrips...)
		choices = append(choices, r.choices...)
		if i%2 == 0 { // each match once: as its seat 0's stream saw it, both seats' decisions
			r.seen[0].decisions += runs[i+1].seen[0].decisions
			moves += r.seen[0].moveCount
			if err := out.Encode(resultOf(r.seen[0], 1)); err != nil {
				return err
			}
		}
	}
	return out.Encode(map[string]summary{"summary": {
		Mode: "many", Matches: len(runs) / 2, Moves: moves, Seconds: seconds, CPUSeconds: cpu,
		RoundTrips: trips, BotSeconds: medianOf(choices),
	}})
}

func playTimed(ctx context.Context, client pb.SniffServiceClient, seat streamSeat, opts streamOptions) botRun {
	var r botRun
	decided := map[seatKey]time.Time{} // when each seat's pending decision came
	opts.onUpdate = func(update *pb.PlayUpdate, at time.Time) {
		key := seatKey{update.GetMatchId(), update.GetSeat()}
		switch update.GetKind().(type) {
		case *pb.PlayUpdate_Decision:
			decided[key] = at
		case *pb.PlayUpdate_Answered:
			if since, ok := decided[key]; ok {
				r.roundTrips = append(r.roundTrips, at.Sub(since).Seconds())
				delete(decided, key)
			}
		}
	}
	opts.onChoice = func(took time.Duration) { r.choices = append(r.choices, took.Seconds()) }
	r.seen, _, r.err = playSeats(ctx, client, []streamSeat{seat}, opts)
	return r
}
