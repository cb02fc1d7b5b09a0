package load

import (
	"strings"
	"testing"
	"time"
)

func TestAgentFlags(t *testing.T) {
	now := time.Date(2026, 11, 25, 5, 0, 0, 0, time.UTC)
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == JobIndexEnv {
				return v
			}
			return ""
		}
	}
	good := []struct {
		a    AgentFlags
		idx  string
		want Segment
	}{
		{AgentFlags{segment: "1/3"}, "", Segment{Index: 1, Count: 3}},
		{AgentFlags{segments: 4}, "3", Segment{Index: 3, Count: 4}},
		{AgentFlags{}, "2", Segment{}},
	}
	for _, g := range good {
		seg, _, err := g.a.Resolve(env(g.idx), now)
		if err != nil || seg != g.want {
			t.Errorf("%+v with index %q: %v, %v; want %v", g.a, g.idx, seg, err, g.want)
		}
	}
	bad := []struct {
		a    AgentFlags
		idx  string
		want string
	}{
		{AgentFlags{segment: "3/3"}, "", "index must be between 0 and 2"},
		{AgentFlags{segment: "1/0"}, "", "number of agents"},
		{AgentFlags{segments: 3}, "", "JOB_COMPLETION_INDEX is not set"},
		{AgentFlags{segments: 3}, "3", "index must be between 0 and 2"},
		{AgentFlags{segments: 3}, "x", "not a number"},
		{AgentFlags{segment: "0/2", segments: 2}, "", "exclude each other"},
		{AgentFlags{StartAt: "2026-11-25T04:59:00Z"}, "", "in the past"},
		{AgentFlags{StartAt: "tomorrow"}, "", "RFC 3339"},
		{AgentFlags{sourceIP: "127.0.0.300"}, "", "--source-ip \"127.0.0.300\": not an IP address"},
	}
	for _, b := range bad {
		_, _, err := b.a.Resolve(env(b.idx), now)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v with index %q: error %v, want one saying %q", b.a, b.idx, err, b.want)
		}
	}
	src := AgentFlags{sourceIP: "127.0.0.2"}
	if _, _, err := src.Resolve(env(""), now); err != nil || src.LocalAddr.String() != "127.0.0.2" {
		t.Errorf("--source-ip 127.0.0.2: %v, %v", src.LocalAddr, err)
	}
	_, at, err := (&AgentFlags{StartAt: "2026-11-25T05:01:00Z"}).Resolve(env(""), now)
	if err != nil || !at.Equal(now.Add(time.Minute)) {
		t.Errorf("start at %v, %v", at, err)
	}
}
