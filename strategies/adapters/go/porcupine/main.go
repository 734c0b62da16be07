// lockbench-porcupine: a run's lock operations, as `lockbench check DIR
// --porcupine` writes them (porcupine-ops.csv), checked for linearizability
// against a mutex (model.go) by Porcupine, and drawn as Porcupine's HTML with
// the run's events as annotations.
//
//	lockbench-porcupine [-timeout-ms N] [-html FILE] OPS
//
// Prints one line: "linearizable", "not linearizable" (with the locks whose
// history is not) or "unknown" (the check ran out of time: never a pass).
// Exit status: 0 linearizable, 1 not linearizable, 5 unknown, 2 usage,
// 4 OPS unreadable or malformed (the line and field named), 3 the HTML could
// not be written.
//
// OPS, one record a line ('#' lines are comments):
//
//	run,END_NS
//	op,CLIENT,KEY,acquire,CALL_NS,RETURN_NS,ok|unknown
//	op,CLIENT,KEY,release,CALL_NS,RETURN_NS,OUTCOME
//	event,T_NS,CLIENT,NODE,NAME,VALUE
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

const maxLine = 4096
const maxClients = 1 << 20

type event struct {
	T            int64
	Client, Node int
	Name         string
	Value        int64
}

type history struct {
	end    int64
	ops    []porcupine.Operation
	events []event
}

var word = regexp.MustCompile(`^[a-z][a-z0-9-]{0,40}$`)

var outcomes = map[string]map[string]bool{
	"acquire": {"ok": true, "unknown": true},
	"release": {"released": true, "lost": true, "foreign": true, "error": true, "killed": true, "cut": true, "indeterminate": true},
}

type lineError struct {
	line  int
	field string
	msg   string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: field %s: %s", e.line, e.field, e.msg) }

func integer(f []string, i, line int, name string, min, max int64) (int64, error) {
	v, err := strconv.ParseInt(f[i], 10, 64)
	if err != nil || v < min || v > max || (len(f[i]) > 1 && (f[i][0] == '0' || f[i][0] == '+')) {
		return 0, &lineError{line, name, fmt.Sprintf("expected an integer from %d to %d, got '%.40s'", min, max, f[i])}
	}
	return v, nil
}

func parseOp(f []string, line int) (porcupine.Operation, error) {
	var op porcupine.Operation
	if len(f) != 7 {
		return op, &lineError{line, "op", fmt.Sprintf("expected 7 fields, got %d", len(f))}
	}
	c, err := integer(f, 1, line, "client", 0, maxClients-1)
	if err != nil {
		return op, err
	}
	k, err := integer(f, 2, line, "key", 0, maxClients-1)
	if err != nil {
		return op, err
	}
	kinds, ok := outcomes[f[3]]
	if !ok {
		return op, &lineError{line, "op", fmt.Sprintf("expected acquire or release, got '%.40s'", f[3])}
	}
	call, err := integer(f, 4, line, "call_ns", 0, 1<<62)
	if err != nil {
		return op, err
	}
	ret, err := integer(f, 5, line, "return_ns", call, 1<<62)
	if err != nil {
		return op, err
	}
	if !kinds[f[6]] {
		return op, &lineError{line, "outcome", fmt.Sprintf("not an outcome of %s: '%.40s'", f[3], f[6])}
	}
	return porcupine.Operation{ClientId: int(c), Input: lockInput{int(c), int(k), f[3]}, Call: call,
		Output: lockOutput{f[6]}, Return: ret}, nil
}

func parseEvent(f []string, line int) (event, error) {
	var e event
	if len(f) != 6 {
		return e, &lineError{line, "event", fmt.Sprintf("expected 6 fields, got %d", len(f))}
	}
	t, err := integer(f, 1, line, "t_ns", 0, 1<<62)
	if err != nil {
		return e, err
	}
	c, err := integer(f, 2, line, "client", -1, maxClients-1)
	if err != nil {
		return e, err
	}
	n, err := integer(f, 3, line, "node", -1, 1<<16)
	if err != nil {
		return e, err
	}
	if !word.MatchString(f[4]) {
		return e, &lineError{line, "name", fmt.Sprintf("expected an event's name, got '%.40s'", f[4])}
	}
	v, err := integer(f, 5, line, "value", -(1 << 62), 1<<62)
	if err != nil {
		return e, err
	}
	return event{t, int(c), int(n), f[4], v}, nil
}

func read(r io.Reader) (*history, error) {
	h := &history{end: -1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, maxLine), maxLine)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if s == "" || s[0] == '#' {
			continue
		}
		f := strings.Split(s, ",")
		switch f[0] {
		case "run":
			if len(f) != 2 || h.end >= 0 {
				return nil, &lineError{line, "run", "expected one line run,END_NS"}
			}
			v, err := integer(f, 1, line, "end_ns", 0, 1<<62)
			if err != nil {
				return nil, err
			}
			h.end = v
		case "op":
			op, err := parseOp(f, line)
			if err != nil {
				return nil, err
			}
			h.ops = append(h.ops, op)
		case "event":
			e, err := parseEvent(f, line)
			if err != nil {
				return nil, err
			}
			h.events = append(h.events, e)
		default:
			return nil, &lineError{line, "record", fmt.Sprintf("expected run, op or event, got '%.40s'", f[0])}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &lineError{line + 1, "line", fmt.Sprintf("longer than %d bytes", maxLine)}
		}
		return nil, err
	}
	if h.end < 0 {
		return nil, &lineError{line, "run", "no run,END_NS line"}
	}
	return h, nil
}

// The events as Porcupine's annotations: a client's on its own line, a
// node's on a line named for the node, the rest on "run".
func annotations(events []event) []porcupine.Annotation {
	var out []porcupine.Annotation
	for _, e := range events {
		a := porcupine.Annotation{Start: e.T, Description: e.Name,
			Details: fmt.Sprintf("%s at %.3f ms (value %d)", e.Name, float64(e.T)/1e6, e.Value),
			BackgroundColor: "#fde2c8"}
		switch {
		case e.Client >= 0:
			a.ClientId = e.Client
		case e.Node >= 0:
			a.Tag = fmt.Sprintf("node %d", e.Node)
		default:
			a.Tag = "run"
		}
		out = append(out, a)
	}
	return out
}

// The locks whose own history is not linearizable (only asked once the whole
// is not), in key order.
func illegalKeys(ops []porcupine.Operation, timeout time.Duration) []int {
	var keys []int
	for _, part := range partitionByKey(ops) {
		m := lockModel
		m.Partition = nil
		if porcupine.CheckOperationsTimeout(m, part, timeout) == porcupine.Illegal {
			keys = append(keys, part[0].Input.(lockInput).Key)
		}
	}
	sort.Ints(keys)
	return keys
}

// The HTML, written beside its final name and renamed onto it: a link or
// anything else planted there is replaced, never written through.
func writeHTML(path string, info porcupine.LinearizationInfo) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".porcupine-*.html")
	if err != nil {
		return err
	}
	if err = porcupine.Visualize(lockModel, info, f); err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lockbench-porcupine", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeoutMs := fs.Int64("timeout-ms", 60000, "give up (unknown) after this many ms; 0: never")
	html := fs.String("html", "", "write Porcupine's visualization here")
	if fs.Parse(args) != nil || fs.NArg() != 1 || *timeoutMs < 0 {
		fmt.Fprintln(stderr, "usage: lockbench-porcupine [-timeout-ms N] [-html FILE] OPS")
		return 2
	}
	path := fs.Arg(0)
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "lockbench-porcupine: %v\n", err)
		return 4
	}
	h, err := read(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "lockbench-porcupine: %s: %v\n", path, err)
		return 4
	}
	timeout := time.Duration(*timeoutMs) * time.Millisecond
	began := time.Now()
	res, info := porcupine.CheckOperationsVerbose(lockModel, h.ops, timeout)
	took := time.Since(began).Seconds()
	if *html != "" {
		info.AddAnnotations(annotations(h.events))
		if err := writeHTML(*html, info); err != nil {
			fmt.Fprintf(stderr, "lockbench-porcupine: %s: %v\n", *html, err)
			return 3
		}
	}
	switch res {
	case porcupine.Ok:
		fmt.Fprintf(stdout, "linearizable (%d operations, %.2f s)\n", len(h.ops), took)
		return 0
	case porcupine.Illegal:
		keys := illegalKeys(h.ops, timeout)
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = strconv.Itoa(k)
		}
		fmt.Fprintf(stdout, "not linearizable (%d operations, %.2f s): lock %s\n", len(h.ops), took,
			strings.Join(names, ", "))
		return 1
	}
	fmt.Fprintf(stdout, "unknown (%d operations): no answer within %d ms\n", len(h.ops), *timeoutMs)
	return 5
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
