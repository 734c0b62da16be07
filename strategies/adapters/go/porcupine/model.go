// The mutex model lockbench's second checker holds a run's lock operations
// to (docs/running.md, "check --porcupine"). One partition per lock (key);
// the state is the client inside, or nobody.
//
// What a section is, is the oracle's: a client is inside from its acquire's
// return (enter) until it stops believing it holds the lock (exit). A lease
// that runs out frees the lock on the server, but the holder may still be
// inside: the model places the end of a holder's hold somewhere in its
// release operation, which lockbench writes from the exit (or the death) to
// the release's return (or the run's end). A lease expiry before the exit is
// exactly what the checker must not excuse: another client's acquire then
// cannot be linearized.
package main

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

const nobody = -1

// What a client did: acquire or release a key.
type lockInput struct {
	Client int
	Key    int
	Op     string // "acquire" or "release"
}

// What it was told: for an acquire "ok" (it entered) or "unknown" (an
// attempt that ended without an answer, an error or the client's death:
// possibly applied on the server); for a release its outcome (released, lost,
// foreign, error, killed, cut): whatever it says, the client is no longer
// inside once its release is linearized.
type lockOutput struct {
	Outcome string
}

func lockStep(state, input, output interface{}) (bool, interface{}) {
	holder := state.(int)
	in := input.(lockInput)
	out := output.(lockOutput)
	switch {
	case in.Op == "acquire" && out.Outcome == "unknown":
		// Applied or not, it puts nobody inside: if the server took the lock
		// for it, the lock is held by a client that does not believe it is
		// (held with no live holder), which can keep others out but never
		// let two in. The mutex of who is inside is unchanged.
		return true, holder
	case in.Op == "acquire":
		if holder != nobody {
			return false, holder
		}
		return true, in.Client
	case in.Op == "release":
		if holder != in.Client {
			return false, holder
		}
		return true, nobody
	}
	return false, holder
}

func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[int][]porcupine.Operation{}
	var keys []int
	for _, op := range history {
		k := op.Input.(lockInput).Key
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], op)
	}
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

var lockModel = porcupine.Model{
	Partition: partitionByKey,
	Init:      func() interface{} { return nobody },
	Step:      lockStep,
	Equal:     func(a, b interface{}) bool { return a.(int) == b.(int) },
	Hash:      func(s interface{}) uint64 { return uint64(s.(int) + 1) },
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(lockInput), output.(lockOutput)
		return fmt.Sprintf("%s(c%d, lock %d) -> %s", in.Op, in.Client, in.Key, out.Outcome)
	},
	DescribeState: func(s interface{}) string {
		if s.(int) == nobody {
			return "free"
		}
		return fmt.Sprintf("held by c%d", s.(int))
	},
}
