#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Offline checks of linkload variants on `nocflow validate --dump-messages` output.

Each case's sends (OUT/messages/<machine>_<TYPE>_<bytes>.txt, lines "src dst bytes") are routed
xy on an R x C mesh (node ids row-major, C per row), cut into 32-byte flits, and compared with the simulated
cycles in OUT/validation.csv. Quick to change, so a candidate term can be scored on the whole
range before it is built into the model (optimizer/README.md, "Accuracy of linkload").

  features DIR [--min-bytes N]  per router-bound mesh case: simulated / busiest router link,
                                U (mean router-link load / busiest), route U (the busiest link's
                                flows: flit-weighted mean load along their routes / busiest),
                                flows on the busiest link, mean message (flits)
  fifo DIR [--type T]           per case: each link a FIFO of its messages' zero-load head
                                arrivals, the edge the latest tail + remaining route (a lower
                                bound without contention delays) against linkload and simulated
  fluid FILE --mesh K|RxC       max-min fair sharing of links and PE channels (1 flit/cycle),
        [--channels C]          each source sending C messages at once in file order: the time
                                bandwidth sharing alone explains
  phased DIR [--channels C]     per case: each source's sends in file order (the lowering's:
        [--type T]              ring order, or nearest first on grouped all-gathers and where
                                the round-robin fluid says that ends sooner) cut into
                                rounds of C (the NI channels), the rounds one
                                after another, each its busiest link (router links and PE
                                channels): lockstep rounds, against the busiest link of all

  round-robin DIR               per case (meshes): a fluid run of the routers' round-robin
        [--channels C]          arbitration among their input ports (the parking-lot effect
        [--type T]              max-min fluid leaves out), each source sending C messages at once
        [--min-bytes N]         in file order, against simulated, linkload and linkload_fitted

  plan-edges DIR --mesh K|RxC   per edge of a plan replayed with `nocflow simulate --mode barrier
        [--channels C]          --dump-programs DIR/prog --out DIR` (add --calibration for the
                                calibrated predictions): linkload and simulated cycles from
                                transfers.csv, and of its sends (DIR/prog) the busiest router
                                link L_R and PE channel L_E, U over the mesh, U_span over the
                                sub-mesh of the PEs that send or receive, k (most messages a PE
                                sends over C NI channels, at most 1), the mean message m, and the
                                sources on a busiest router link (optimizer/README.md, "Sharing
                                where the edge runs")

Fixed as configs/hw/mesh8x8.yaml: 32-byte flits, a 2-cycle router pipeline, 1-cycle links. numpy only
(/usr/bin/python3, installed with python3-matplotlib).
"""
import argparse
import collections
import csv
import os
import re
import sys

try:
    import numpy as np
except ModuleNotFoundError as missing:  # one line and exit code 2, not a traceback
    print(f"linkload_offline: needs the Python module '{missing.name}': run it with /usr/bin/python3 "
          "and Debian's python3-numpy (with python3-matplotlib: scripts/install-deps.sh)",
          file=sys.stderr)
    sys.exit(2)

FLIT_BYTES, PIPELINE, LINK = 32, 2, 1


def flits(nbytes):
    """A message's flits: its bytes over the flit width, at least one."""
    return max(1, -(-nbytes // FLIT_BYTES))


def mesh_links(rows, cols):
    """Router-to-router links of a rows x cols mesh, both directions."""
    return 2 * (rows * (cols - 1) + cols * (rows - 1))
HOP = PIPELINE + LINK


def read_messages(path):
    """(src, dst, flits) of every message to another PE."""
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            s, d, b = map(int, line.split()[:3])
            if s != d:
                out.append((s, d, flits(b)))
    return out


def route(s, d, cols):
    """Router-to-router links of the xy route on a mesh `cols` wide, then the ejection port
    ('ej', d)."""
    if cols == 0:  # crossbar: one switch
        return [("ej", d)]
    x, y, dx, dy = s % cols, s // cols, d % cols, d // cols
    links = []
    while x != dx:
        nx = x + (1 if dx > x else -1)
        links.append(((x, y), (nx, y)))
        x = nx
    while y != dy:
        ny = y + (1 if dy > y else -1)
        links.append(((x, y), (x, ny)))
        y = ny
    return links + [("ej", d)]


def cases(out_dir, min_bytes=0):
    """Rows of validation.csv whose sends were dumped, with the mesh's (rows, columns) ((0, 0):
    a crossbar) and the file."""
    with open(os.path.join(out_dir, "validation.csv")) as f:
        for row in csv.DictReader(f):
            topo = row["topology"]
            mesh = re.fullmatch(r"mesh (\d+)x(\d+)", topo)
            shape = (int(mesh[1]), int(mesh[2])) if mesh else (0, 0)
            machine = topo.replace(" ", "_")
            path = os.path.join(out_dir, "messages", f"{machine}_{row['type']}_{row['tensor_bytes']}.txt")
            if int(row["tensor_bytes"]) >= min_bytes and float(row["simulated_cycles"]) > 0 and os.path.exists(path):
                yield row, shape, path


def features(args):
    print("machine type KiB sim/L_R U route_U flows m")
    for row, (rows, cols), path in cases(args.dir, args.min_bytes):
        if cols == 0:
            continue
        msgs = read_messages(path)
        load, flows, routes = collections.Counter(), collections.defaultdict(list), []
        for i, (s, d, f) in enumerate(msgs):
            r = route(s, d, cols)[:-1]
            routes.append(r)
            for link in r:
                load[link] += f
                flows[link].append(i)
        busiest = max(load.values(), default=0)
        if busiest < float(row["busiest_endpoint_flits"]):
            continue  # endpoint-bound: no router term applies
        u = sum(load.values()) / (mesh_links(rows, cols) * busiest)
        route_u, most = 0.0, 0
        for link in [l for l in load if load[l] == busiest][:8]:  # the largest over 8 tied links
            num = sum(msgs[i][2] * load[l] for i in flows[link] for l in routes[i])
            den = sum(msgs[i][2] * len(routes[i]) for i in flows[link])
            route_u, most = max(route_u, num / den / busiest), max(most, len(flows[link]))
        m = sum(x[2] for x in msgs) / len(msgs)
        print(f"{rows}x{cols} {row['type']} {int(row['tensor_bytes']) >> 10} "
              f"{float(row['simulated_cycles']) / busiest:.2f} {u:.2f} {route_u:.2f} {most} {m:.0f}")


def fifo_bound(msgs, cols):
    """Latest tail over every link served FIFO from zero-load head arrivals, + remaining route."""
    at = collections.defaultdict(list)  # link -> (head arrival, flits, cycles after the link)
    for s, d, f in msgs:
        r = route(s, d, cols)
        n = len(r)  # routers crossed
        at[("inj", s)].append((0, f, n * HOP + LINK + 1))
        for i, link in enumerate(r):
            at[link].append(((i + 1) * HOP, f, (n - 1 - i) * HOP + LINK + 1))
    latest = 0
    for entries in at.values():
        free = 0
        # Ties: the longer rest of route first, as linkload's schedule (the order of the file
        # does not matter).
        for arrival, f, after in sorted(entries, key=lambda e: (e[0], -e[2])):
            free = max(free, arrival) + f
            latest = max(latest, free + after)
    return latest


def fifo(args):
    print("machine type KiB simulated linkload linkload_fitted fifo_bound")
    for row, (_, cols), path in cases(args.dir):
        if args.type and row["type"] != args.type:
            continue
        print(row["topology"].replace(" ", "_"), row["type"], int(row["tensor_bytes"]) >> 10,
              row["simulated_cycles"], row["linkload_cycles"], row["linkload_fitted_cycles"],
              fifo_bound(read_messages(path), cols))


def first_window(msgs, channels):
    """Each source's messages in file order, and the first `channels` of each in flight: (the
    queues of those waiting by source, a mask of those in flight)."""
    waiting = collections.defaultdict(collections.deque)
    for i, (s, _, _) in enumerate(msgs):
        waiting[s].append(i)
    active = np.zeros(len(msgs), bool)
    for queue in waiting.values():
        for _ in range(min(channels, len(queue))):
            active[queue.popleft()] = True
    return waiting, active


def next_in_window(done, msgs, waiting, active):
    """Messages `done` leave the window; each source's next waiting one takes its place."""
    for i in done:
        active[i] = False
        if waiting[msgs[i][0]]:
            active[waiting[msgs[i][0]].popleft()] = True


def fluid(args):
    msgs = read_messages(args.file)
    ids, pair_link, pair_flow = {}, [], []
    for i, (s, d, f) in enumerate(msgs):
        for link in [("inj", s)] + route(s, d, args.mesh[1]):
            pair_link.append(ids.setdefault(link, len(ids)))
            pair_flow.append(i)
    pair_link, pair_flow = np.array(pair_link), np.array(pair_flow)
    left = np.array([m[2] for m in msgs], float)
    waiting, active = first_window(msgs, args.channels)
    t = 0.0
    while active.any():
        rate, frozen, cap = np.zeros(len(msgs)), ~active, np.ones(len(ids))
        while not frozen.all():  # water-filling
            live = ~frozen[pair_flow]
            n = np.bincount(pair_link[live], minlength=len(ids))
            share = np.where(n > 0, cap / np.maximum(n, 1), np.inf)
            s = share.min()
            now = live & (share[pair_link] <= s * (1 + 1e-9))
            flows = np.unique(pair_flow[now])
            rate[flows], frozen[flows] = s, True
            taken = np.isin(pair_flow, flows)
            cap -= np.bincount(pair_link[taken], minlength=len(ids)) * s
        idx = np.flatnonzero(active)
        dt = (left[idx] / rate[idx]).min()
        t += dt
        left[idx] -= rate[idx] * dt
        next_in_window(idx[left[idx] <= 1e-6], msgs, waiting, active)
    print(f"{args.file}: {t:.0f} cycles (max-min fair, {args.channels} messages per source at once)")


def round_robin_fluid(msgs, rows, cols, channels):
    """Cycles for `msgs` (src, dst, flits) on a rows x cols xy mesh when every router output
    shares its flit per cycle round-robin among its input ports: a fluid run, event by event (a
    message done, its source's next one starts). A source offers 1 flit/cycle split evenly over
    its C active messages; then, in the order xy's channel dependencies allow (x links along
    their direction, then y links, then ejection), each output gives its input ports (local,
    from each of the four directions) max-min shares of 1 by their offered rates, and a port's
    messages keep their proportions (their flits arrive mixed). Rates only fall downstream:
    what a slowed message leaves upstream is not given to others. On a 1 x 16 line where every
    PE sends 512 flits to every other this gives 47,831 cycles (simulated 50,411), max-min fair
    sharing 35,921: a message coming from far away is halved at every router where local
    traffic joins it."""
    kinds = {(1, 0): 0, (-1, 0): 1, (0, 1): 2, (0, -1): 3}  # x+, x-, y+, y-; 4: ejection

    def level(kind, x, y):  # a topological order of xy's channel dependencies
        return (x, cols - 1 - x, cols + y, cols + rows - 1 - y, cols + rows)[kind]

    ids, levels, pairs = {}, [], []  # pairs: (level, message, resource, input port)
    for i, (s, d, _) in enumerate(msgs):
        x, y, dx, dy = s % cols, s // cols, d % cols, d // cols
        hops = []
        while x != dx:
            step = 1 if dx > x else -1
            hops.append((kinds[(step, 0)], x, y))
            x += step
        while y != dy:
            step = 1 if dy > y else -1
            hops.append((kinds[(0, step)], x, y))
            y += step
        port = 0  # the local input; then 1 + the kind of the link the message came by
        for res in hops + [(4, x, y)]:
            if res not in ids:
                ids[res] = len(ids)
                levels.append(level(*res))
            pairs.append((levels[ids[res]], i, ids[res], port))
            port = 1 + res[0]
    pairs.sort()
    lvl, msg, res, port = (np.array(c) for c in zip(*pairs))
    bounds = np.searchsorted(lvl, np.arange(lvl.max() + 2))
    key = res * 5 + port
    src = np.array([m[0] for m in msgs])
    left = np.array([m[2] for m in msgs], float)
    waiting, active = first_window(msgs, channels)
    t = 0.0
    while active.any():
        per_source = np.bincount(src[active], minlength=src.max() + 1)
        rate = np.where(active, 1.0 / np.maximum(per_source[src], 1), 0.0)
        for a, b in zip(bounds[:-1], bounds[1:]):
            live = a + np.flatnonzero(active[msg[a:b]])
            if len(live) == 0:
                continue
            demand = np.bincount(key[live], weights=rate[msg[live]], minlength=5 * len(ids)).reshape(-1, 5)
            share, cap, open_ = np.zeros_like(demand), np.ones(len(demand)), demand > 0
            for _ in range(5):  # max-min water-filling over the ports
                fair = cap / np.maximum(open_.sum(1), 1)
                small = open_ & (demand <= fair[:, None])
                if not small.any():
                    share[open_] = np.broadcast_to(fair[:, None], demand.shape)[open_]
                    break
                share[small] = demand[small]
                cap -= np.where(small, demand, 0).sum(1)
                open_ &= ~small
            scale = np.minimum(1.0, share / np.where(demand > 0, demand, 1.0)).reshape(-1)
            rate[msg[live]] *= scale[key[live]]
        idx = np.flatnonzero(active)
        dt = (left[idx] / rate[idx]).min()
        t += dt
        left[idx] -= rate[idx] * dt
        next_in_window(idx[left[idx] <= 1e-6 * np.maximum(1.0, left[idx] + rate[idx] * dt)], msgs, waiting, active)
    return t


def round_robin(args):
    print("machine type KiB simulated linkload linkload_fitted round_robin error linkload_error fitted_error")
    for row, (rows, cols), path in cases(args.dir, args.min_bytes):
        msgs = read_messages(path)
        if cols == 0 or not msgs or (args.type and row["type"] != args.type):
            continue
        sim = float(row["simulated_cycles"])
        t = round_robin_fluid(msgs, rows, cols, args.channels)
        ll, fitted = float(row["linkload_cycles"]), float(row["linkload_fitted_cycles"])
        print(row["topology"].replace(" ", "_"), row["type"], int(row["tensor_bytes"]) >> 10, int(sim),
              round(ll), round(fitted), round(t), *(f"{(v - sim) / sim * 100:+.1f}%" for v in (t, ll, fitted)),
              flush=True)


def phased_bound(msgs, cols, channels):
    """Σ over rounds (the r-th `channels` messages of every source) of the round's busiest link."""
    rounds = collections.defaultdict(collections.Counter)
    sent = collections.Counter()
    for s, d, f in msgs:
        load = rounds[sent[s] // channels]
        sent[s] += 1
        for link in [("inj", s)] + route(s, d, cols):
            load[link] += f
    return sum(max(load.values()) for load in rounds.values())


def phased(args):
    print("machine type KiB simulated linkload linkload_fitted busiest_link phased simulated/phased")
    for row, (_, cols), path in cases(args.dir):
        if args.type and row["type"] != args.type:
            continue
        msgs = read_messages(path)
        if not msgs:
            continue
        all_links = phased_bound(msgs, cols, len(msgs))  # one round: the busiest link of all
        bound = phased_bound(msgs, cols, args.channels)
        print(row["topology"].replace(" ", "_"), row["type"], int(row["tensor_bytes"]) >> 10,
              row["simulated_cycles"], row["linkload_cycles"], row["linkload_fitted_cycles"], all_links,
              bound, f"{float(row['simulated_cycles']) / bound:.2f}")


def plan_sends(prog_dir):
    """{edge name: [(src, dst, flits)]} of the sends in DIR/pe_N.txt (simulate --dump-programs)."""
    sends = collections.defaultdict(list)
    for name in os.listdir(prog_dir):
        pe = re.fullmatch(r"pe_(\d+)\.txt", name)
        if not pe:
            continue
        with open(os.path.join(prog_dir, name)) as f:
            for line in f:
                m = re.match(r"send\s.*\bto=PE(\d+)\s+bytes=(\d+).*\bedge=(\S+)", line)
                if m and int(m[1]) != int(pe[1]):
                    sends[m[3]].append((int(pe[1]), int(m[1]), flits(int(m[2]))))
    return sends


def plan_edges(args):
    rows, cols = args.mesh
    links = mesh_links(rows, cols)
    sends = plan_sends(os.path.join(args.dir, "prog"))
    print("edge type linkload simulated error L_R L_E U U_span k m sources")
    with open(os.path.join(args.dir, "transfers.csv")) as f:
        for row in csv.DictReader(f):
            msgs = sends.get(f"{row['src']}->{row['dst']}")
            if row["src"] == row["dst"] or not msgs or not row["simulated_cycles"]:
                continue
            load, channel, sent = collections.Counter(), collections.Counter(), collections.Counter()
            sources = collections.defaultdict(set)
            for s, d, f in msgs:
                sent[s] += 1
                channel[("inj", s)] += f
                channel[("ej", d)] += f
                for link in route(s, d, cols)[:-1]:
                    load[link] += f
                    sources[link].add(s)
            busiest = max(load.values(), default=0)
            if busiest == 0:
                continue
            pes = {s for s, _, _ in msgs} | {d for _, d, _ in msgs}
            w = max(p % cols for p in pes) - min(p % cols for p in pes) + 1
            h = max(p // cols for p in pes) - min(p // cols for p in pes) + 1
            span_links = mesh_links(h, w)
            predicted, simulated = float(row["predicted_linkload_cycles"]), float(row["simulated_cycles"])
            print(f"{row['src']}->{row['dst']} {row['type'].split()[0]} {predicted:.1f} {simulated:.0f} "
                  f"{(predicted - simulated) / simulated:+.3f} {busiest} {max(channel.values())} "
                  f"{sum(load.values()) / (links * busiest):.2f} "
                  f"{sum(load.values()) / (span_links * busiest):.2f} "
                  f"{min(max(sent.values()), args.channels) / args.channels:.2f} "
                  f"{sum(m[2] for m in msgs) / len(msgs):.1f} "
                  f"{max(len(sources[l]) for l in load if load[l] == busiest)}")


def mesh_shape(text):
    """(rows, columns) of "K" or "RxC"."""
    m = re.fullmatch(r"(\d+)(?:[xX](\d+))?", text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"'{text}' is not K or RxC")
    return int(m[1]), int(m[2] or m[1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("features")
    f.add_argument("dir")
    f.add_argument("--min-bytes", type=int, default=65536)
    f.set_defaults(run=features)
    q = sub.add_parser("fifo")
    q.add_argument("dir")
    q.add_argument("--type")
    q.set_defaults(run=fifo)
    m = sub.add_parser("fluid")
    m.add_argument("file")
    m.add_argument("--mesh", type=mesh_shape, required=True, help="K (K x K) or RxC")
    m.add_argument("--channels", type=int, default=8)
    m.set_defaults(run=fluid)
    r = sub.add_parser("phased")
    r.add_argument("dir")
    r.add_argument("--channels", type=int, default=8)
    r.add_argument("--type")
    r.set_defaults(run=phased)
    o = sub.add_parser("round-robin")
    o.add_argument("dir")
    o.add_argument("--channels", type=int, default=8)
    o.add_argument("--type")
    o.add_argument("--min-bytes", type=int, default=65536)
    o.set_defaults(run=round_robin)
    e = sub.add_parser("plan-edges")
    e.add_argument("dir")
    e.add_argument("--mesh", type=mesh_shape, required=True, help="K (K x K) or RxC")
    e.add_argument("--channels", type=int, default=8)
    e.set_defaults(run=plan_edges)
    args = p.parse_args()
    try:
        args.run(args)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as e:
        # A folder that is not validate's or simulate's output: one line, as the plot scripts.
        print(f"linkload_offline: {e.filename}: {e.strerror}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
