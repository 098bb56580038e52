// Package decentral runs decentralized optimizers — DSGD, GNSD and GT-STORM —
// over m simulated nodes on an undirected communication graph.
//
// The package holds every node's parameters as one flat m × p float32 slab,
// mixes them through a sparse doubly stochastic matrix W over the graph's
// neighbour lists (O(|E|·p) per round), and asks a gradient Oracle for
// stochastic gradients on minibatches drawn by a Sampler. It knows nothing
// about models or datasets: a node's loss is reached only through those two
// interfaces.
//
// The pieces, one idea per file:
//
//   - Graph and its generators (Erdős–Rényi, ring, path, complete, star,
//     torus, edge-list file), NewTopology to pick one by name;
//   - Mixing: W = I − 2/(3 λ_max(L)) L or Metropolis–Hastings, with
//     λ = max(|λ_2|, |λ_m|) in closed form for the generators' graphs, else
//     from a dense eigensolver for small m and sparse Lanczos iteration for
//     large m (spectrum.go);
//   - Exchange: how a node's vectors reach its neighbours each round
//     (MemExchange in memory; a network transport can replace it);
//   - Schedule: the step sizes η_t and GT-STORM's β_t;
//   - DSGD, GNSD and GT-STORM, one file each, run by an Optimizer that counts
//     samples, rounds, bytes and state floats as SPEC §6 defines them.
package decentral
