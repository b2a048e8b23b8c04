// Command playbot is the Go sample bot of the American Sniff service: it plays seats over the
// Play bidirectional stream (docs/service.md, "Play"), one message each way per decision, or,
// with -mode unary, with GetState, ListLegalMoves and ApplyMove per action. It is built from
// proto/sniff/v1/sniff.proto alone (clients/go/build.sh) against the distribution's Go gRPC
// libraries; see clients/go/README.md.
//
//	playbot [-addr HOST:PORT] [-seats 2] [-seed 7] [-matches 1] [-policy greedy]
//	        [-mode play|unary] [-batch K] [-variant NAME] [-round-limit N]
//	playbot -seat MATCH_ID:TOKEN [-seat ...] [-seed S] [-policy greedy]
//	playbot -bots 64 [-conns 4] [-wait]
//
// Without -seat it creates -matches matches (match i seeded -seed + i) and plays every seat of
// all of them; with -seat it plays the seats it is given (a real player holds its own seat's
// token only). It prints one JSON line per match (its result and actions as seen) and a last
// line {"summary": ...} with the wall time, the client's CPU time and, with -bots, the round
// trip of every decision. On an error it prints "playbot: CODE: message" and exits 1.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	pb "americansniff/sniff/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

type seatFlags []string

func (s *seatFlags) String() string     { return strings.Join(*s, ",") }
func (s *seatFlags) Set(v string) error { *s = append(*s, v); return nil }

type config struct {
	addr       string
	mode       string
	seats      uint
	seed       uint64
	matches    int
	batch      int
	policies   []string
	variant    string
	roundLimit uint
	given      seatFlags
	bots       int
	conns      int
	wait       bool
	tlsCA      string
	houseKey   string
	stream     streamOptions
}

func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("playbot", flag.ContinueOnError)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:50051", "the service's address")
	fs.StringVar(&c.mode, "mode", "play", "play: one Play stream; unary: GetState, ListLegalMoves, ApplyMove per action")
	fs.UintVar(&c.seats, "seats", 2, "seats of each match created (2 to 4)")
	fs.Uint64Var(&c.seed, "seed", 7, "seed of the first match created (match i: seed + i); with -seat, the match seed the policies' generators are seeded from")
	fs.IntVar(&c.matches, "matches", 1, "matches to create and play")
	fs.IntVar(&c.batch, "batch", 0, "play the matches this many at a time (0: all at once)")
	policies := fs.String("policy", "greedy", "policy of each seat, comma-separated (seat i plays the (i mod n)th): first, greedy, random")
	fs.StringVar(&c.variant, "variant", "", "variant of the matches created: american, stubby, berndt, british")
	fs.UintVar(&c.roundLimit, "round-limit", 0, "round limit of the matches created (0: none)")
	fs.Var(&c.given, "seat", "MATCH_ID:TOKEN of a seat to play (repeatable): play these seats instead of creating matches")
	fs.IntVar(&c.bots, "bots", 0, "many-bots mode: this many bots (an even number), each one seat of a 2-seat match on its own Play stream, each decision's round trip recorded")
	fs.IntVar(&c.conns, "conns", 4, "with -bots: connections the streams are spread over")
	fs.BoolVar(&c.wait, "wait", false, "once the matches are created, print {\"ready\":true} and wait for a line on stdin before playing (benchmarks)")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "speak TLS, trusting this CA certificate (PEM)")
	houseKeyFile := fs.String("house-key-file", "", "file holding the service's house key (for CreateMatch)")
	fs.IntVar(&c.stream.dropAfter, "drop-after", 0, "cancel the first Play stream after this many answers, then resume on a new one (tests)")
	fs.IntVar(&c.stream.retries, "retries", 5, "reconnections after UNAVAILABLE, at most, in a row")
	fs.DurationVar(&c.stream.backoff, "backoff", 200*time.Millisecond, "first pause before reconnecting (doubled each time)")
	fs.DurationVar(&c.stream.timeout, "timeout", 10*time.Minute, "deadline of the whole play")
	fs.DurationVar(&c.stream.think, "think", 0, "pause this long before each move (a bot that thinks)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if c.policies, err = parsePolicies(*policies); err != nil {
		return nil, err
	}
	if c.mode != "play" && c.mode != "unary" {
		return nil, fmt.Errorf("-mode: play or unary, not %q", c.mode)
	}
	if c.bots < 0 || c.bots%2 != 0 {
		return nil, fmt.Errorf("-bots: an even number, not %d", c.bots)
	}
	if *houseKeyFile != "" {
		key, err := os.ReadFile(*houseKeyFile)
		if err != nil {
			return nil, err
		}
		c.houseKey = strings.TrimSpace(string(key))
	}
	return c, nil
}

func (c *config) dial() (*grpc.ClientConn, error) {
	security := grpc.WithInsecure()
	if c.tlsCA != "" {
		creds, err := credentials.NewClientTLSFromFile(c.tlsCA, "")
		if err != nil {
			return nil, err
		}
		security = grpc.WithTransportCredentials(creds)
	}
	// Reconnect soon after a restarted service is back: grpc's default waits up to 2 minutes.
	reconnect := grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second},
		MinConnectTimeout: 5 * time.Second,
	})
	return grpc.Dial(c.addr, security, reconnect)
}

// matchResult is one match's JSON line.
type matchResult struct {
	MatchID   string   `json:"match_id"`
	Seats     int      `json:"seats"`
	Moves     uint32   `json:"moves"`
	Rounds    int      `json:"rounds"`
	Decisions int      `json:"decisions"`
	Winner    *uint32  `json:"winner"`
	Scores    []int32  `json:"scores"`
	Actions   []string `json:"actions"`
	Streams   int      `json:"streams,omitempty"`
}

// summary is the last JSON line: what a benchmark reads.
type summary struct {
	Mode       string    `json:"mode"`
	Matches    int       `json:"matches"`
	Moves      uint32    `json:"moves"`
	Seconds    float64   `json:"seconds"`
	CPUSeconds float64   `json:"cpu_seconds"`
	RoundTrips []float64 `json:"round_trips,omitempty"`
	BotSeconds float64   `json:"bot_seconds_median,omitempty"`
}

func resultOf(m *matchSeen, streams int) matchResult {
	r := matchResult{
		MatchID: m.matchID, Seats: m.seats, Moves: m.moveCount, Rounds: m.rounds,
		Decisions: m.decisions, Actions: m.actions, Streams: streams, Scores: []int32{},
	}
	if m.end != nil {
		r.Scores = m.end.GetScores()
		r.Winner = m.end.Winner
	}
	if r.Actions == nil {
		r.Actions = []string{}
	}
	return r
}

func cpuSeconds() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()
}

// created is one match this client created, with its seed.
type created struct {
	reply *pb.CreateMatchResponse
	seed  uint64
}

func (c *config) create(ctx context.Context, client pb.SniffServiceClient, seats uint32, seed uint64) (created, error) {
	request := &pb.CreateMatchRequest{SeatCount: seats, Seed: &seed}
	if c.variant != "" {
		v, ok := pb.Variant_value["VARIANT_"+strings.ToUpper(c.variant)]
		if !ok {
			return created{}, fmt.Errorf("-variant: no variant %q", c.variant)
		}
		request.Variant = pb.Variant(v)
	}
	if c.roundLimit > 0 {
		limit := uint32(c.roundLimit)
		request.RoundLimit = &limit
	}
	if c.houseKey != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "x-sniff-house-key", c.houseKey)
	}
	reply, err := client.CreateMatch(ctx, request)
	return created{reply, seed}, err
}

func (c *config) seatsOf(m created) []streamSeat {
	var out []streamSeat
	for i, token := range m.reply.GetSeatTokens() {
		out = append(out, streamSeat{m.reply.GetMatchId(), token, seatPolicy(c.policies, m.seed, uint32(i))})
	}
	return out
}

func (c *config) waitForGo(out *json.Encoder) error {
	if !c.wait {
		return nil
	}
	if err := out.Encode(map[string]bool{"ready": true}); err != nil {
		return err
	}
	_, err := bufio.NewReader(os.Stdin).ReadString('\n')
	return err
}

func run(c *config, out *json.Encoder) error {
	conn, err := c.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	client := pb.NewSniffServiceClient(conn)
	ctx := context.Background()
	if c.bots > 0 {
		return runMany(ctx, c, out)
	}
	if len(c.given) > 0 {
		var seats []streamSeat
		for _, text := range c.given {
			parts := strings.SplitN(text, ":", 2)
			if len(parts) != 2 {
				return fmt.Errorf("-seat: MATCH_ID:TOKEN, not %q", text)
			}
			seats = append(seats, streamSeat{parts[0], parts[1], nil})
		}
		opts := c.stream
		opts.policyFor = func(seat uint32) policy { return seatPolicy(c.policies, c.seed, seat) }
		return report(c, out, "play", func() ([]*matchSeen, []int, error) {
			seen, streams, err := playSeats(ctx, client, seats, opts)
			return seen, repeat(streams, len(seen)), err
		})
	}
	var all []created
	for i := 0; i < c.matches; i++ {
		m, err := c.create(ctx, client, uint32(c.seats), c.seed+uint64(i))
		if err != nil {
			return err
		}
		all = append(all, m)
	}
	if err := c.waitForGo(out); err != nil {
		return err
	}
	return report(c, out, c.mode, func() ([]*matchSeen, []int, error) {
		return c.playCreated(ctx, client, all)
	})
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}

// playCreated plays the created matches -batch at a time: over one Play stream per batch, or
// (unary) one goroutine per match.
func (c *config) playCreated(ctx context.Context, client pb.SniffServiceClient, all []created) ([]*matchSeen, []int, error) {
	batch := c.batch
	if batch <= 0 {
		batch = len(all)
	}
	var seen []*matchSeen
	var streams []int
	for start := 0; start < len(all); start += batch {
		end := start + batch
		if end > len(all) {
			end = len(all)
		}
		part := all[start:end]
		if c.mode == "unary" {
			got, err := playUnaryAll(ctx, client, c, part)
			seen = append(seen, got...)
			streams = append(streams, make([]int, len(got))...)
			if err != nil {
				return seen, streams, err
			}
			continue
		}
		var seats []streamSeat
		for _, m := range part {
			seats = append(seats, c.seatsOf(m)...)
		}
		got, n, err := playSeats(ctx, client, seats, c.stream)
		seen = append(seen, got...)
		streams = append(streams, repeat(n, len(got))...)
		if err != nil {
			return seen, streams, err
		}
	}
	return seen, streams, nil
}

func playUnaryAll(ctx context.Context, client pb.SniffServiceClient, c *config, part []created) ([]*matchSeen, error) {
	got := make([]*matchSeen, len(part))
	errs := make([]error, len(part))
	var wg sync.WaitGroup
	for i, m := range part {
		wg.Add(1)
		go func(i int, m created) {
			defer wg.Done()
			var policies []policy
			for seat := range m.reply.GetSeatTokens() {
				policies = append(policies, seatPolicy(c.policies, m.seed, uint32(seat)))
			}
			got[i], errs[i] = playUnary(ctx, client, m.reply, policies)
		}(i, m)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

func report(c *config, out *json.Encoder, mode string, play func() ([]*matchSeen, []int, error)) error {
	cpu0, t0 := cpuSeconds(), time.Now()
	seen, streams, err := play()
	seconds, cpu := time.Since(t0).Seconds(), cpuSeconds()-cpu0
	if err != nil {
		return err
	}
	var moves uint32
	for i, m := range seen {
		moves += m.moveCount
		if err := out.Encode(resultOf(m, streams[i])); err != nil {
			return err
		}
	}
	return out.Encode(map[string]summary{"summary": {
		Mode: mode, Matches: len(seen), Moves: moves, Seconds: seconds, CPUSeconds: cpu,
	}})
}

// statusName is a status code as the proto and the docs write it (UNAUTHENTICATED).
func statusName(err error) string {
	s, ok := status.FromError(err)
	if !ok {
		return ""
	}
	var b strings.Builder
	for i, r := range s.Code().String() {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

func main() {
	c, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "playbot: %v\n", err)
		os.Exit(2)
	}
	out := json.NewEncoder(os.Stdout)
	if err := run(c, out); err != nil {
		if name := statusName(err); name != "" {
			fmt.Fprintf(os.Stderr, "playbot: %s: %s\n", name, status.Convert(err).Message())
		} else {
			fmt.Fprintf(os.Stderr, "playbot: %v\n", err)
		}
		os.Exit(1)
	}
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
