package experiment

import "github.com/gtstorm/gtstorm/train"

// sweepCells returns the cells of `gtstorm sweep` with one --vary: base
// with the setting named by param (any of Sweepable) set to each of values
// in turn, as VaryCells makes them.
func sweepCells(base train.Config, param string, values []string, seeds int) ([]Cell, error) {
	return VaryCells([]Cell{{Configs: Seeds(base, seeds)}}, []Vary{{Name: param, Values: values}})
}
