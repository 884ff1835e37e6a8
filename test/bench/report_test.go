package bench

import "testing"

func TestRate_ShowsWhichSideOfItsLimitARatioIsOn(t *testing.T) {
	cases := []struct {
		rt, limit float64
		want      string
	}{
		{1.07, 1.2, "1.07x"},
		{1.2, 1.2, "1.20x"},
		{1.2012, 1.2, "1.201x"},
		{1.2004, 1.2, "1.2004x"},
		{1.1996, 1.2, "1.20x"},
		{1.5, 1.5, "1.50x"},
		{1.5049, 1.5, "1.505x"},
	}
	for _, c := range cases {
		if got := rate(c.rt, c.limit); got != c.want {
			t.Errorf("rate(%v, %v) = %q, want %q", c.rt, c.limit, got, c.want)
		}
	}
}
