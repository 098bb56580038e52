// Package robust holds Byzantine nodes, their attacks and the robust
// aggregation rules that resist them, and plugs them into a
// [decentral.Optimizer] through two small hooks of package decentral:
//
//   - a [decentral.Mixer] (Config.Mixer) that combines what a node receives
//     with an [Aggregator] in place of plain gossip: [Mean], [Clip], [Trim]
//     or [Median] (aggregate.go, agg_clip.go, agg_trim.go, agg_median.go);
//   - an exchange decorator (Config.Exchange) that tells the lies: a
//     Byzantine node sends each honest neighbour the message its [Attack]
//     makes (attack.go, lies.go), made where the node runs and sent through
//     a [decentral.ScatterExchange]; omniscient attacks read the round's
//     honest vectors through [decentral.ViewingExchange], which is why
//     their Byzantine node's process must run its targets
//     ([CheckPlacement]).
//
// [Apply] sets both, and the Byzantine nodes the measures leave out, from a
// [Setting]; [ParseByzantine], [ParseAttack] and [ParseAggregate] read the
// flag forms (byzantine.go). The honest nodes of a run without an attack on
// messages send through the plain exchange, and without a rule mix by
// plain gossip: nothing of this package is on their path.
package robust
