package main

import pb "americansniff/sniff/v1"

// Sides as bits, in the engine's order (the proto's Side enum minus one).
const (
	lowBit     = 1 << 0
	highBit    = 1 << 1
	lineABit   = 1 << 2
	lineBBit   = 1 << 3
	branchABit = 1 << 4
	branchBBit = 1 << 5
	lineBits   = lineABit | lineBBit
)

// sniffRule is what the Sniff counts under its variant and orientation (sniff/variants.py).
type sniffRule struct {
	countsWhole  bool // crosswise: 2*d while a line side is open; in line: d per open line side
	branchCounts bool // American: each open branch counts d once both line sides are covered
}

func ruleOf(variant pb.Variant, orientation pb.Orientation) sniffRule {
	inline := orientation == pb.Orientation_ORIENTATION_INLINE ||
		(orientation == pb.Orientation_ORIENTATION_UNSPECIFIED && variant == pb.Variant_VARIANT_STUBBY)
	american := variant == pb.Variant_VARIANT_AMERICAN || variant == pb.Variant_VARIANT_UNSPECIFIED
	return sniffRule{countsWhole: !inline, branchCounts: american}
}

type tileKey struct{ low, high uint32 }

func keyOf(t *pb.Tile) tileKey { return tileKey{t.GetLow(), t.GetHigh()} }

func openCount(covered, a, b int) int {
	n := 0
	if covered&a == 0 {
		n++
	}
	if covered&b == 0 {
		n++
	}
	return n
}

// contribution is what one placed tile adds to the counted ends (docs/rules.md §5, §10.2);
// sniff is nil for every tile but the Sniff.
func contribution(t tileKey, covered int, sniff *sniffRule) int {
	a, b := int(t.low), int(t.high)
	if a != b {
		n := 0
		if covered&lowBit == 0 {
			n += a
		}
		if covered&highBit == 0 {
			n += b
		}
		return n
	}
	if sniff == nil {
		if covered&lineBBit != 0 {
			return 0
		}
		return 2 * a
	}
	if covered&lineBits == lineBits {
		if !sniff.branchCounts {
			return 0
		}
		return a * openCount(covered, branchABit, branchBBit)
	}
	if sniff.countsWhole {
		return 2 * a
	}
	return a * openCount(covered, lineABit, lineBBit)
}

// layout is what the points of a placement depend on, rebuilt from a seat's view: the sides
// each placed tile has covered, which tile is the Sniff and its rule, and the ends sum.
type layout struct {
	variant  pb.Variant
	covered  map[tileKey]int
	sniff    tileKey
	hasSniff bool
	rule     sniffRule
	ends     int
}

func sideValue(board tileKey, side pb.Side) uint32 {
	if side == pb.Side_SIDE_HIGH && board.low != board.high {
		return board.high
	}
	return board.low
}

func layoutOf(state *pb.MatchState) *layout {
	l := &layout{
		variant: state.GetVariant(),
		covered: make(map[tileKey]int, len(state.GetLayoutTiles())),
		ends:    int(state.GetEndsSum()),
	}
	for _, p := range state.GetLayoutTiles() {
		t := keyOf(p.GetTile())
		if p.GetBoardTile() == nil {
			l.covered[t] = 0
		} else {
			board := keyOf(p.GetBoardTile())
			l.covered[board] |= 1 << (int(p.GetSide()) - 1)
			l.covered[t] = joinedBy(t, sideValue(board, p.GetSide()))
		}
		if p.GetSniff() {
			l.sniff, l.hasSniff = t, true
			l.rule = ruleOf(l.variant, p.GetOrientation())
		}
	}
	return l
}

// joinedBy is the side a tile covers when it joins a place of value `value`.
func joinedBy(t tileKey, value uint32) int {
	switch {
	case t.low == t.high:
		return lineABit
	case t.low == value:
		return lowBit
	default:
		return highBit
	}
}

// pointsAfter is the points a lead or placement would score at once (sniff/layout.py
// ends_after, then §5: a positive multiple of five scores itself).
func (l *layout) pointsAfter(m *pb.Move) int {
	var t tileKey
	var orientation pb.Orientation
	if lead := m.GetLead(); lead != nil {
		t, orientation = keyOf(lead.GetTile()), lead.GetOrientation()
	} else if place := m.GetPlace(); place != nil {
		t, orientation = keyOf(place.GetTile()), place.GetOrientation()
	} else {
		return 0
	}
	var newRule *sniffRule
	if t.low == t.high && !l.hasSniff {
		r := ruleOf(l.variant, orientation)
		newRule = &r
	}
	var ends int
	if m.GetLead() != nil {
		ends = contribution(t, 0, newRule)
	} else {
		place := m.GetPlace()
		board := keyOf(place.GetBoardTile())
		var boardRule *sniffRule
		if l.hasSniff && board == l.sniff {
			boardRule = &l.rule
		}
		cov := l.covered[board]
		value := sideValue(board, place.GetSide())
		added := int(t.low + t.high - value)
		if t.low == t.high {
			added = contribution(t, lineABit, newRule)
		}
		after := cov | 1<<(int(place.GetSide())-1)
		ends = l.ends - contribution(board, cov, boardRule) + contribution(board, after, boardRule) + added
	}
	if ends > 0 && ends%5 == 0 {
		return ends
	}
	return 0
}
