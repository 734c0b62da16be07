package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func check(t *testing.T, ops string, html string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "porcupine-ops.csv")
	if err := os.WriteFile(path, []byte(ops), 0644); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	args := []string{"-timeout-ms", "20000", path}
	if html != "" {
		args = append([]string{"-html", filepath.Join(dir, html)}, args...)
	}
	rc := run(args, &out, &errs)
	return rc, out.String() + errs.String()
}

// Two clients one after the other; a third that touches the second's exit
// (the oracle: touching ends do not overlap).
func TestSequentialSectionsAreLinearizable(t *testing.T) {
	rc, out := check(t, "run,100\n"+
		"op,0,0,acquire,0,10,ok\nop,0,0,release,20,25,released\n"+
		"op,1,0,acquire,5,30,ok\nop,1,0,release,40,41,released\n"+
		"op,2,0,acquire,35,40,ok\nop,2,0,release,50,60,released\n", "")
	if rc != 0 || !strings.HasPrefix(out, "linearizable") {
		t.Fatalf("rc %d: %s", rc, out)
	}
}

// A lease that ran out while its holder was still inside (exit 50) and
// another that entered at 30: the overlap the oracle counts. Whatever the
// first's release says (lost), it cannot be linearized.
func TestAnExpiredLeaseStillBelievedIsNotLinearizable(t *testing.T) {
	rc, out := check(t, "run,100\n"+
		"op,0,0,acquire,0,10,ok\nop,0,0,release,50,55,lost\n"+
		"op,1,0,acquire,20,30,ok\nop,1,0,release,60,61,released\n"+
		"op,2,1,acquire,0,1,ok\nop,2,1,release,2,3,released\n"+
		"event,25,-1,0,node-pause,0\n", "porcupine.html")
	if rc != 1 || !strings.Contains(out, "not linearizable") || !strings.Contains(out, "lock 0\n") {
		t.Fatalf("rc %d: %s", rc, out)
	}
}

// The holder stopped believing (exit 20) before the other entered (30): the
// lease's end on the server happened somewhere in its release, which came
// back lost. Linearizable: the model's notion is the oracle's section.
func TestALostReleaseAfterTheExitIsLinearizable(t *testing.T) {
	rc, out := check(t, "run,100\n"+
		"op,0,0,acquire,0,10,ok\nop,0,0,release,20,45,lost\n"+
		"op,1,0,acquire,15,30,ok\nop,1,0,release,60,61,released\n", "")
	if rc != 0 {
		t.Fatalf("rc %d: %s", rc, out)
	}
}

// A holder killed inside (release from its death to the run's end) and an
// acquire whose answer never came (possibly applied): neither lets two in.
func TestDeathsAndUnknownAcquiresAreLinearizable(t *testing.T) {
	rc, out := check(t, "run,100\n"+
		"op,0,0,acquire,0,10,ok\nop,0,0,release,20,100,killed\n"+
		"op,1,0,acquire,5,8,unknown\n"+
		"op,1,0,acquire,9,30,ok\nop,1,0,release,40,41,error\n", "")
	if rc != 0 {
		t.Fatalf("rc %d: %s", rc, out)
	}
}

// The HTML is written, and replaces a link planted at its name.
func TestTheHTMLReplacesALink(t *testing.T) {
	dir := t.TempDir()
	ops := filepath.Join(dir, "ops")
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0644)
	os.Symlink(target, filepath.Join(dir, "porcupine.html"))
	os.WriteFile(ops, []byte("run,10\nop,0,0,acquire,0,1,ok\nevent,1,0,-1,kill,0\n"), 0644)
	var out bytes.Buffer
	if rc := run([]string{"-html", filepath.Join(dir, "porcupine.html"), ops}, &out, &out); rc != 0 {
		t.Fatalf("rc %d: %s", rc, out.String())
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatal("the link's target was written")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "porcupine.html")); !bytes.Contains(b, []byte("kill")) {
		t.Fatal("no annotation in the HTML")
	}
}

// Malformed input names its line and field; nothing is checked.
func TestMalformedInputIsRefused(t *testing.T) {
	for _, bad := range []string{
		"run,10\nop,0,0,acquire,5,4,ok\n",       // returns before its call
		"run,10\nop,0,0,grab,0,1,ok\n",          // no such operation
		"run,10\nop,0,0,release,0,1,ok\n",       // not a release's outcome
		"op,0,0,acquire,0,1,ok\n",               // no run line
		"run,10\nevent,1,0,-1,<script>,0\n",     // not a name
		"run,10\nop,-1,0,acquire,0,1,ok\n",      // a client below 0
		"run,10\nop,0,0,acquire,0,1,ok,extra\n", // a field too many
	} {
		rc, out := check(t, bad, "")
		if rc != 4 || !strings.Contains(out, "line ") {
			t.Errorf("%q: rc %d: %s", bad, rc, out)
		}
	}
}

// A history Porcupine cannot decide in time: 40 clients whose sections all
// overlap one another and a release nobody could have made. Unknown is said
// as such (exit 5), never as linearizable.
func TestNoAnswerInTimeIsUnknown(t *testing.T) {
	var b strings.Builder
	b.WriteString("run,1000\n")
	for c := 0; c < 40; c++ {
		fmt.Fprintf(&b, "op,%d,0,acquire,0,1000,ok\nop,%d,0,release,0,1000,released\n", c, c)
	}
	b.WriteString("op,99,0,release,0,1000,released\n")
	dir := t.TempDir()
	path := filepath.Join(dir, "ops")
	os.WriteFile(path, []byte(b.String()), 0644)
	var out bytes.Buffer
	if rc := run([]string{"-timeout-ms", "50", path}, &out, &out); rc != 5 || !strings.HasPrefix(out.String(), "unknown") {
		t.Fatalf("rc %d: %s", rc, out.String())
	}
}
