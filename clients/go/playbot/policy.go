package main

import (
	"fmt"
	"strings"

	pb "americansniff/sniff/v1"
)

// A policy chooses one of a seat's legal moves (given in the canonical order) from the seat's
// view, and returns its index.
type policy interface {
	name() string
	choose(state *pb.MatchState, moves []*pb.Move) int
}

// first: the first legal move in canonical order.
type firstPolicy struct{}

func (firstPolicy) name() string { return "first" }

func (firstPolicy) choose(*pb.MatchState, []*pb.Move) int { return 0 }

// greedy: the move scoring most at once, ties drawn by the seat's generator in canonical
// order (sniff.policies.greedy_choice, so the same choices as sniff.bots' greedy).
type greedyPolicy struct{ rng *generator }

func (greedyPolicy) name() string { return "greedy" }

func isPlacement(m *pb.Move) bool { return m.GetLead() != nil || m.GetPlace() != nil }

func (p greedyPolicy) choose(state *pb.MatchState, moves []*pb.Move) int {
	if len(moves) == 1 || !isPlacement(moves[0]) {
		return 0
	}
	l := layoutOf(state)
	top := -1
	var best []int
	for i, m := range moves {
		points := l.pointsAfter(m)
		if points > top {
			top, best = points, []int{i}
		} else if points == top {
			best = append(best, i)
		}
	}
	if len(best) == 1 {
		return best[0]
	}
	return best[p.rng.below(len(best))]
}

// random: uniform over the legal moves (sniff.policies.random_choice).
type randomPolicy struct{ rng *generator }

func (randomPolicy) name() string { return "random" }

func (p randomPolicy) choose(_ *pb.MatchState, moves []*pb.Move) int {
	if len(moves) == 1 {
		return 0
	}
	return p.rng.below(len(moves))
}

var policyNames = []string{"first", "greedy", "random"}

// parsePolicies reads a comma-separated list of policy names: seat i plays the (i mod n)th.
func parsePolicies(text string) ([]string, error) {
	names := strings.Split(text, ",")
	for _, n := range names {
		known := false
		for _, k := range policyNames {
			known = known || n == k
		}
		if !known {
			return nil, fmt.Errorf("no policy %q (one of %s)", n, strings.Join(policyNames, ", "))
		}
	}
	return names, nil
}

// seatPolicy is seat's policy in a match seeded `seed`, its generator seeded as the engine
// seeds that seat's bot (sniff.seeds.bot_seed), as analysis.bot_matches.bot_players does.
func seatPolicy(names []string, seed uint64, seat uint32) policy {
	rng := newGenerator(botSeed(seed, seat))
	switch names[int(seat)%len(names)] {
	case "greedy":
		return greedyPolicy{rng}
	case "random":
		return randomPolicy{rng}
	default:
		return firstPolicy{}
	}
}
