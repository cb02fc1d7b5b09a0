package main

import (
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/load"
)

func TestAgentFlags(t *testing.T) {
	now := time.Date(2026, 11, 25, 5, 0, 0, 0, time.UTC)
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == jobIndexEnv {
				return v
			}
			return ""
		}
	}
	good := []struct {
		a    agentFlags
		idx  string
		want load.Segment
	}{
		{agentFlags{segment: "1/3"}, "", load.Segment{Index: 1, Count: 3}},
		{agentFlags{segments: 4}, "3", load.Segment{Index: 3, Count: 4}},
		{agentFlags{}, "2", load.Segment{}},
	}
	for _, g := range good {
		seg, _, err := g.a.resolve(env(g.idx), now)
		if err != nil || seg != g.want {
			t.Errorf("%+v with index %q: %v, %v; want %v", g.a, g.idx, seg, err, g.want)
		}
	}
	bad := []struct {
		a    agentFlags
		idx  string
		want string
	}{
		{agentFlags{segment: "3/3"}, "", "index must be between 0 and 2"},
		{agentFlags{segment: "1/0"}, "", "number of agents"},
		{agentFlags{segments: 3}, "", "JOB_COMPLETION_INDEX is not set"},
		{agentFlags{segments: 3}, "3", "index must be between 0 and 2"},
		{agentFlags{segments: 3}, "x", "not a number"},
		{agentFlags{segment: "0/2", segments: 2}, "", "exclude each other"},
		{agentFlags{startAt: "2026-11-25T04:59:00Z"}, "", "in the past"},
		{agentFlags{startAt: "tomorrow"}, "", "RFC 3339"},
	}
	for _, b := range bad {
		_, _, err := b.a.resolve(env(b.idx), now)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v with index %q: error %v, want one saying %q", b.a, b.idx, err, b.want)
		}
	}
	_, at, err := (&agentFlags{startAt: "2026-11-25T05:01:00Z"}).resolve(env(""), now)
	if err != nil || !at.Equal(now.Add(time.Minute)) {
		t.Errorf("start at %v, %v", at, err)
	}
}
