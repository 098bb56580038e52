package experiment

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/robust"

	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
)

// Vary is one `--vary NAME=V1,V2,…` of a grid: a sweepable setting (see
// [train.Sweepable]) and the values its cells take, in order.
type Vary struct {
	Name   string
	Values []string
}

// String returns v in its flag form, NAME=V1,V2,….
func (v Vary) String() string { return v.Name + "=" + strings.Join(v.Values, ",") }

// ParseVary parses NAME=V1,V2,…, dropping blank values. The commas of an
// MLP's widths, a ViT's and a CCT's numbers stay in its value:
// model=mlp:64,32,cifar-cnn varies the model over mlp:64,32 and
// cifar-cnn, model=mlp:64,32@0.5,mlp:64 over mlp:64,32@0.5 and mlp:64,
// and model=vit:4,16,2,2,cct:2,2,1,16/3x2 over vit:4,16,2,2 and
// cct:2,2,1,16/3x2 (no model name is a bare number). Likewise a step schedule's milestones stay in its value:
// schedule=step:0.5,0.75@0.2,cosine varies the schedule over
// step:0.5,0.75@0.2 and cosine (no schedule is a bare number).
func ParseVary(spec string) (Vary, error) {
	name, values, ok := strings.Cut(spec, "=")
	v := Vary{Name: strings.TrimSpace(name)}
	for _, f := range strings.Split(values, ",") {
		f = strings.TrimSpace(f)
		if last := len(v.Values) - 1; v.Name == "model" && last >= 0 && f != "" && continuesModel(v.Values[last], f) {
			v.Values[last] += "," + f
			continue
		}
		if last := len(v.Values) - 1; v.Name == "schedule" && last >= 0 && f != "" &&
			strings.HasPrefix(v.Values[last], decentral.ScheduleStep+":") && !strings.Contains(v.Values[last], "@") && stepMilestone(f) {
			v.Values[last] += "," + f
			continue
		}
		if f != "" {
			v.Values = append(v.Values, f)
		}
	}
	if !ok || v.Name == "" || len(v.Values) == 0 {
		return Vary{}, &train.ConfigError{Flag: "vary", Value: spec,
			Want: "NAME=V1,V2,… with NAME one of " + strings.Join(train.Sweepable(), ", ")}
	}
	return v, nil
}

// stepMilestone reports whether f continues a step schedule in a list of
// values: a milestone, or the last one and the factor (0.75@0.2).
func stepMilestone(f string) bool {
	m, _, _ := strings.Cut(f, "@")
	_, err := strconv.ParseFloat(m, 64)
	return err == nil
}

// continuesModel reports whether f, in a list of models, continues the
// name prev: an MLP's next width (or width and dropout rate, 32@0.5)
// after one without a rate, a ViT's next number, or a CCT's next number
// (or the last with its tokenizer, 16/3x2) before its tokenizer.
func continuesModel(prev, f string) bool {
	switch {
	case strings.HasPrefix(prev, models.MLPPrefix):
		w, _, _ := strings.Cut(f, models.MLPDropoutSep)
		return !strings.Contains(prev, models.MLPDropoutSep) && isDigits(w)
	case strings.HasPrefix(prev, models.ViTPrefix):
		return isDigits(f)
	case strings.HasPrefix(prev, models.CCTPrefix):
		n, tokenizer, _ := strings.Cut(f, "/")
		return !strings.Contains(prev, "/") && isDigits(n) && (tokenizer == "" || strings.Trim(tokenizer, "0123456789x") == "")
	}
	return false
}

// isDigits reports whether s is a non-empty run of decimal digits.
func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// The parts of a cell's label that say it runs without lying nodes, and the
// value of a varied attack that asks for that.
const (
	CleanLabel = "clean"
	AttackNone = train.AttackNone
)

// robustNames are the settings whose varied values a clean cell drops: a
// run without Byzantine nodes has no attack, whatever the grid lists.
var robustNames = []string{"byzantine", "attack"}

// VaryCells returns every cell of cells once per combination of the varied
// values: the cartesian product, the first Vary outermost, each cell's
// label gaining a "NAME=VALUE" part per Vary (also appended to Cell.Vary).
// Every name must be a sweepable setting, varied once, each value listed
// once.
//
// A combination with no Byzantine nodes (byzantine=0), or with attack=none
// (which clears them), is a clean run: whatever attack it lists, it runs none. Its
// byzantine and attack parts become one "clean" part, and the clean
// combinations that differ only in those parts are one cell, run once: a
// study of attacks × aggregation rules × B has one clean cell per rule. A
// varied attack that no cell runs (no --byzantine nodes) is refused, as
// train refuses --attack without them.
//
// Where the grid varies algo, a method knob of the base settings (--gamma,
// --period, …) applies to the cells whose method takes it, as in
// [CompareCells].
func VaryCells(cells []Cell, vary []Vary) ([]Cell, error) {
	if err := checkVary(vary); err != nil {
		return nil, err
	}
	factor := 1 // the combinations of the varied values
	for _, v := range vary {
		factor = mulCapped(factor, len(v.Values))
	}
	if big := checkGrid(cells, factor); big != nil {
		return nil, &train.ConfigError{Flag: "vary", Value: VaryTitle(vary), Want: big.want()}
	}
	combos, err := combine(cells, vary)
	if err != nil {
		return nil, err
	}
	var out []Cell
	index := map[string]int{}     // a clean cell's label → its place in out
	attacked := map[string]bool{} // a varied attack part that some cell runs
	for _, c := range combos {
		cell, parts := c.base, c.parts
		clean := varies(parts, robustNames...) && (slices.Contains(parts, "attack="+AttackNone) || noByzantine(cell.Configs))
		for _, p := range parts {
			attacked[p] = attacked[p] || !clean && isPart(p, "attack")
		}
		if clean {
			parts = cleanParts(parts)
			for k := range cell.Configs {
				cell.Configs[k].Byzantine, cell.Configs[k].Attack = "", ""
			}
		}
		if varies(parts, "algo") {
			// A method knob given for the grid sets the cells whose
			// method takes it; a varied one is refused where it does not.
			for k := range cell.Configs {
				cell.Configs[k] = cell.Configs[k].WithoutForeignKnobs(VaryNames(vary)...)
			}
		}
		cell.Vary = slices.Concat(c.base.Vary, parts)
		cell.Label = joinLabel(c.base.Label, parts)
		if clean {
			if i, dup := index[cell.Label]; dup {
				if !sameConfigs(out[i].Configs, cell.Configs) {
					return nil, &DuplicateCellsError{out[i].Label, cell.Label}
				}
				continue
			}
			index[cell.Label] = len(out)
		}
		out = append(out, cell)
	}
	for _, v := range vary {
		for _, x := range v.Values {
			if v.Name == "attack" && x != AttackNone && !attacked[v.Name+"="+x] {
				return nil, &train.ConfigError{Flag: "vary", Value: v.String(),
					Want: fmt.Sprintf("no attack without --byzantine nodes (%s would run clean): give --byzantine B or --vary byzantine=…", x)}
			}
		}
	}
	return out, nil
}

// checkVary refuses a --vary of a setting that is not sweepable, a setting
// varied twice, and a value listed twice.
func checkVary(vary []Vary) error {
	for i, v := range vary {
		if !slices.Contains(train.Sweepable(), v.Name) {
			return &train.ConfigError{Flag: "vary", Value: v.Name, Want: "one of " + strings.Join(train.Sweepable(), ", ")}
		}
		if slices.ContainsFunc(vary[:i], func(w Vary) bool { return w.Name == v.Name }) {
			return &train.ConfigError{Flag: "vary", Value: v.Name, Want: "each setting varied once (list its values in one --vary " + v.Name + "=V1,V2,…)"}
		}
		for k, x := range v.Values {
			if slices.Contains(v.Values[:k], x) {
				return &train.ConfigError{Flag: "vary", Value: v.String(), Want: fmt.Sprintf("each value once (%s is listed twice)", x)}
			}
		}
	}
	return nil
}

// combo is one cell of a grid times one combination of varied values:
// parts lists them as "name=value".
type combo struct {
	base  Cell
	parts []string
}

// combine returns every cell times every combination of the varied
// values, in order (the last --vary varying fastest), each configuration
// set as --vary sets it.
func combine(cells []Cell, vary []Vary) ([]combo, error) {
	combos := make([]combo, len(cells))
	for i, c := range cells {
		combos[i] = combo{base: c}
	}
	for _, v := range vary {
		var next []combo
		for _, c := range combos {
			for _, val := range v.Values {
				n := combo{base: c.base, parts: append(slices.Clip(c.parts), v.Name+"="+val)}
				n.base.Configs = slices.Clone(c.base.Configs)
				for k := range n.base.Configs {
					if err := setVaried(&n.base.Configs[k], v.Name, val); err != nil {
						return nil, err
					}
				}
				next = append(next, n)
			}
		}
		combos = next
	}
	return combos, nil
}

// setVaried sets the setting name of c to value, as --vary does: the
// attack "none" is no attack (VaryCells then clears the Byzantine nodes).
func setVaried(c *train.Config, name, value string) error {
	if name == "attack" && value == AttackNone {
		c.Attack = ""
		return nil
	}
	return c.Set(name, value)
}

// noByzantine reports whether the runs of configs have no Byzantine nodes.
func noByzantine(configs []train.Config) bool {
	for _, c := range configs {
		nodes, err := robust.ParseByzantine(c.Byzantine, c.Nodes, c.Seed)
		if err != nil || len(nodes) > 0 {
			return false
		}
	}
	return true
}

// cleanParts replaces the byzantine and attack parts of a cell's varied
// parts with one "clean" part, where the first of them stood.
func cleanParts(parts []string) []string {
	var out []string
	for _, p := range parts {
		switch {
		case !isPart(p, robustNames...):
			out = append(out, p)
		case !slices.Contains(out, CleanLabel):
			out = append(out, CleanLabel)
		}
	}
	return out
}

// varies reports whether parts holds a NAME=VALUE part of one of names.
func varies(parts []string, names ...string) bool {
	return slices.ContainsFunc(parts, func(p string) bool { return isPart(p, names...) })
}

// isPart reports whether the label part p is NAME=VALUE for one of names.
func isPart(p string, names ...string) bool {
	name, _, ok := strings.Cut(p, "=")
	return ok && slices.Contains(names, name)
}

// joinLabel joins a base label (possibly empty) and parts with " / ".
func joinLabel(base string, parts []string) string {
	if base != "" {
		parts = append([]string{base}, parts...)
	}
	return strings.Join(parts, " / ")
}

// sameConfigs reports whether a and b are the same runs.
func sameConfigs(a, b []train.Config) bool {
	return slices.EqualFunc(a, b, func(x, y train.Config) bool { return train.ResultKey(x) == train.ResultKey(y) })
}

// VaryTitle names the varied settings of a grid for its report's title,
// such as "byzantine × attack × aggregate".
func VaryTitle(vary []Vary) string { return strings.Join(VaryNames(vary), " × ") }

// VaryNames returns the names of the varied settings, in order.
func VaryNames(vary []Vary) []string {
	names := make([]string, len(vary))
	for i, v := range vary {
		names[i] = v.Name
	}
	return names
}
