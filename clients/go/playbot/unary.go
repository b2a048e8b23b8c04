package main

import (
	"context"

	pb "americansniff/sniff/v1"
)

// playUnary plays a created match to its end with three unary calls per action (GetState,
// ListLegalMoves, ApplyMove) and DealRound then GetState per round, each seat with its own
// token only: analysis/remote.py's play_remote_match, the loop the Play stream replaces.
func playUnary(ctx context.Context, client pb.SniffServiceClient, created *pb.CreateMatchResponse, policies []policy) (*matchSeen, error) {
	matchID, tokens := created.GetMatchId(), created.GetSeatTokens()
	m := &matchSeen{matchID: matchID, seats: len(tokens), rounds: 1}
	turn, hasTurn := created.GetTurn(), true
	var moveCount uint32
	for {
		if !hasTurn {
			if _, err := client.DealRound(ctx, &pb.DealRoundRequest{MatchId: matchID, Token: tokens[0]}); err != nil {
				return m, err
			}
			m.rounds++
			got, err := client.GetState(ctx, &pb.GetStateRequest{MatchId: matchID, Token: tokens[0]})
			if err != nil {
				return m, err
			}
			turn, hasTurn = got.GetState().GetTurn(), true
			continue
		}
		token := tokens[turn]
		got, err := client.GetState(ctx, &pb.GetStateRequest{MatchId: matchID, Token: token})
		if err != nil {
			return m, err
		}
		legal, err := client.ListLegalMoves(ctx, &pb.ListLegalMovesRequest{MatchId: matchID, Token: token, Seat: turn})
		if err != nil {
			return m, err
		}
		moves := legal.GetMoves()
		chosen := moves[policies[turn].choose(got.GetState(), moves)]
		m.decisions++
		reply, err := client.ApplyMove(ctx, &pb.ApplyMoveRequest{
			MatchId: matchID, Token: token, Seat: turn,
			Action:            &pb.ApplyMoveRequest_Notation{Notation: chosen.GetNotation()},
			ExpectedMoveCount: moveCount,
		})
		if err != nil {
			return m, err
		}
		moveCount = reply.GetMoveCount()
		m.moveCount = moveCount
		m.actions = append(m.actions, reply.GetMove().GetNotation())
		if reply.GetMatchEnd() != nil {
			m.end = reply.GetMatchEnd()
			return m, nil
		}
		turn, hasTurn = reply.GetTurn(), reply.Turn != nil
	}
}
