// A layered drawing of a directed graph, top to bottom (after Sugiyama, as dagre does it): an edge that
// closes a cycle is turned round for the layout; each node goes in the layer of its longest path from
// the root; an edge that spans several layers passes through a placeholder in each, so it bends around
// the boxes between; nodes are ordered within their layers to cross few edges, and each is placed
// under the nodes that lead to it. A turned edge is drawn back up as it really goes.

export interface Point {
  x: number;
  y: number;
}

export interface LayoutOptions {
  nodeWidth: number;
  nodeHeight: number;
  /** Between layers, where the edges and their labels go. */
  layerGap: number;
  /** Between two boxes of a layer. */
  nodeGap: number;
  margin: number;
  /** Room kept right of a loop (an edge from a box to itself) for its label. */
  labelRoom: number;
}

export interface PlacedEdge {
  from: string;
  to: string;
  /** Closes a cycle: drawn back up. */
  back: boolean;
  /** An SVG path from the source's border to the target's (where the arrowhead goes). */
  path: string;
  /** Where its label goes: on its first stretch, near the source, which is what the label speaks of. */
  label: Point;
}

export interface Layout {
  width: number;
  height: number;
  /** Each node's box, by its top-left corner. */
  nodes: Map<string, Point & { layer: number }>;
  /** In the order of the edges given. */
  edges: PlacedEdge[];
}

interface Edge {
  from: string;
  to: string;
}

/** The edges (by index) that close a cycle, found depth first from `root` (then from any node not reached), and the postorder. */
function backEdges(nodes: string[], edges: Edge[], root: string): { back: Set<number>; postorder: string[] } {
  const out = new Map(nodes.map((n) => [n, [] as number[]]));
  edges.forEach((e, i) => out.get(e.from)!.push(i));
  const state = new Map<string, 'open' | 'done'>();
  const back = new Set<number>();
  const postorder: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    for (const i of out.get(node)!) {
      const seen = state.get(edges[i]!.to);
      if (seen === 'open') back.add(i);
      else if (seen === undefined) visit(edges[i]!.to);
    }
    state.set(node, 'done');
    postorder.push(node);
  };
  for (const node of [root, ...nodes]) if (!state.has(node)) visit(node);
  return { back, postorder };
}

/** How many pairs of edges between two rows cross, each edge given as its ends' positions in the rows. */
function crossings(pairs: [number, number][]): number {
  let count = 0;
  for (let i = 0; i < pairs.length; i++) {
    for (let j = i + 1; j < pairs.length; j++) {
      const [a, b] = [pairs[i]!, pairs[j]!];
      if ((a[0] - b[0]) * (a[1] - b[1]) < 0) count++;
    }
  }
  return count;
}

/** Rows of items ordered to cross few edges: breadth first from the root, then sweeps down and up, the best order kept. */
function orderRows(rows: string[][], next: Map<string, string[]>, prev: Map<string, string[]>): string[][] {
  const total = (order: string[][]) => {
    let sum = 0;
    for (let r = 1; r < order.length; r++) {
      const at = new Map(order[r - 1]!.map((id, k) => [id, k]));
      const pairs: [number, number][] = [];
      order[r]!.forEach((id, k) => prev.get(id)!.forEach((p) => pairs.push([at.get(p)!, k])));
      sum += crossings(pairs);
    }
    return sum;
  };
  // Each item at the mean position of its neighbours in the row before (it keeps its place without any).
  const sweep = (order: string[][], r: number, neighbours: Map<string, string[]>, other: string[]) => {
    const at = new Map(other.map((id, k) => [id, k]));
    const key = new Map(
      order[r]!.map((id, k) => {
        const ks = neighbours.get(id)!.map((n) => at.get(n)!);
        return [id, ks.length ? ks.reduce((a, b) => a + b, 0) / ks.length : k];
      }),
    );
    order[r] = [...order[r]!].sort((a, b) => key.get(a)! - key.get(b)!);
  };
  let best = rows;
  let fewest = total(rows);
  const order = rows.map((r) => [...r]);
  for (let pass = 0; pass < 4 && fewest > 0; pass++) {
    for (let r = 1; r < order.length; r++) sweep(order, r, prev, order[r - 1]!);
    for (let r = order.length - 2; r >= 0; r--) sweep(order, r, next, order[r + 1]!);
    const count = total(order);
    if (count < fewest) [best, fewest] = [order.map((row) => [...row]), count];
  }
  return best;
}

export function layoutGraph(nodes: string[], edges: Edge[], root: string, o: LayoutOptions): Layout {
  const { back, postorder } = backEdges(nodes, edges, root);
  // Every edge as it goes down: a back edge turned round, a loop left out (drawn on its box).
  const down = edges.map((e, i) => (e.from === e.to ? undefined : back.has(i) ? { from: e.to, to: e.from } : e));

  // Longest path from the root, in topological order (the reverse of the depth-first postorder).
  const layer = new Map(nodes.map((n) => [n, 0]));
  for (const node of [...postorder].reverse()) {
    for (const e of down) if (e?.from === node) layer.set(e.to, Math.max(layer.get(e.to)!, layer.get(node)! + 1));
  }
  const layers = Math.max(0, ...layer.values()) + 1;

  // Items: the nodes, and a placeholder in each layer a long edge passes through.
  const itemLayer = new Map(layer);
  const chains = new Map<number, string[]>();
  const next = new Map<string, string[]>(nodes.map((n) => [n, []]));
  const prev = new Map<string, string[]>(nodes.map((n) => [n, []]));
  down.forEach((e, i) => {
    if (!e) return;
    const chain = [e.from];
    for (let l = layer.get(e.from)! + 1; l < layer.get(e.to)!; l++) {
      const id = `\u0000${i}:${l}`;
      itemLayer.set(id, l);
      next.set(id, []);
      prev.set(id, []);
      chain.push(id);
    }
    chain.push(e.to);
    for (let k = 1; k < chain.length; k++) {
      next.get(chain[k - 1]!)!.push(chain[k]!);
      prev.get(chain[k]!)!.push(chain[k - 1]!);
    }
    chains.set(i, chain);
  });
  const isNode = (id: string) => !id.startsWith('\u0000');

  // First order: breadth first from the root, connections in the order given.
  const rows: string[][] = Array.from({ length: layers }, () => []);
  const seen = new Set<string>();
  for (const start of [root, ...nodes]) {
    if (seen.has(start)) continue;
    seen.add(start);
    const queue = [start];
    while (queue.length > 0) {
      const id = queue.shift()!;
      rows[itemLayer.get(id)!]!.push(id);
      for (const to of next.get(id)!) {
        if (seen.has(to)) continue;
        seen.add(to);
        queue.push(to);
      }
    }
  }
  const ordered = orderRows(rows, next, prev);

  // Across: each item centred under the items before it, as near as the gaps allow.
  const width = (id: string) => (isNode(id) ? o.nodeWidth : 0);
  const centre = new Map<string, number>();
  for (const row of ordered) {
    const wanted = row.map((id) => {
      const ps = prev.get(id)!;
      return ps.length ? ps.reduce((sum, p) => sum + centre.get(p)!, 0) / ps.length : undefined;
    });
    const xs: number[] = [];
    row.forEach((id, k) => {
      const before = row[k - 1];
      const min = before === undefined ? -Infinity : xs[k - 1]! + (width(before) + width(id)) / 2 + (isNode(id) || isNode(before) ? o.nodeGap : o.nodeGap / 2);
      xs.push(Math.max(wanted[k] ?? (k === 0 ? 0 : min), min));
    });
    // The row moved as a whole, so that it sits as far left of where it is wanted as right.
    const off = wanted.flatMap((w, k) => (w === undefined ? [] : [w - xs[k]!]));
    const shift = off.length ? off.reduce((a, b) => a + b, 0) / off.length : 0;
    row.forEach((id, k) => centre.set(id, xs[k]! + shift));
  }
  const left = Math.min(...[...centre].map(([id, x]) => x - width(id) / 2));
  for (const [id, x] of centre) centre.set(id, x - left + o.margin);
  let right = Math.max(...[...centre].map(([id, x]) => x + width(id) / 2));

  const top = (l: number) => o.margin + l * (o.nodeHeight + o.layerGap);
  const boxes = new Map(nodes.map((n) => [n, { x: centre.get(n)! - o.nodeWidth / 2, y: top(layer.get(n)!), layer: layer.get(n)! }]));

  // Where each edge leaves a box's bottom and enters the next one's top: spread along the border in
  // the order of the other ends (two edges between the same boxes, of two types, side by side).
  const ports = new Map<string, number>();
  for (const node of nodes) {
    for (const end of ['bottom', 'top'] as const) {
      const ids = [...chains].filter(([, c]) => (end === 'bottom' ? c[0] : c.at(-1)) === node);
      const along = (c: string[]) => centre.get(end === 'bottom' ? c[1]! : c.at(-2)!)!;
      ids.sort(([a, ca], [b, cb]) => along(ca) - along(cb) || a - b);
      ids.forEach(([i], k) => ports.set(`${end}${i}`, boxes.get(node)!.x + (o.nodeWidth / (ids.length + 1)) * (k + 1)));
    }
  }

  const placed = edges.map((edge, i): PlacedEdge => {
    const chain = chains.get(i);
    if (!chain) {
      // A loop: out of the box's right side and back into it.
      const box = boxes.get(edge.from)!;
      const [x, y1, y2] = [box.x + o.nodeWidth, box.y + (o.nodeHeight * 2) / 3, box.y + o.nodeHeight / 3];
      right = Math.max(right, x + 40 + o.labelRoom);
      return { from: edge.from, to: edge.to, back: true, path: `M${x},${y1} C${x + 48},${y1 + 12} ${x + 48},${y2 - 12} ${x},${y2}`, label: { x: x + 40, y: (y1 + y2) / 2 } };
    }
    const points: Point[] = [{ x: ports.get(`bottom${i}`)!, y: top(itemLayer.get(chain[0]!)!) + o.nodeHeight }];
    for (const id of chain.slice(1, -1)) points.push({ x: centre.get(id)!, y: top(itemLayer.get(id)!) }, { x: centre.get(id)!, y: top(itemLayer.get(id)!) + o.nodeHeight });
    points.push({ x: ports.get(`top${i}`)!, y: top(itemLayer.get(chain.at(-1)!)!) });
    if (back.has(i)) points.reverse();
    let path = `M${points[0]!.x},${points[0]!.y}`;
    for (let k = 1; k < points.length; k++) {
      const [p, q] = [points[k - 1]!, points[k]!];
      const mid = (p.y + q.y) / 2;
      path += p.x === q.x ? ` L${q.x},${q.y}` : ` C${p.x},${mid} ${q.x},${mid} ${q.x},${q.y}`;
    }
    const [p, q] = [points[0]!, points[1]!];
    return { from: edge.from, to: edge.to, back: back.has(i), path, label: { x: (p.x + q.x) / 2, y: (p.y + q.y) / 2 } };
  });

  return { width: Math.ceil(right + o.margin), height: top(layers - 1) + o.nodeHeight + o.margin, nodes: boxes, edges: placed };
}
