import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { layoutGraph, type Layout } from '../../src/dashboard/graph-layout.ts';

// The layered layout the automations page draws: layers, back edges, and boxes that never overlap.

const O = { nodeWidth: 200, nodeHeight: 60, layerGap: 64, nodeGap: 40, margin: 16, labelRoom: 100 };

const edges = (...pairs: string[]) => pairs.map((p) => ({ from: p.split('>')[0]!, to: p.split('>')[1]! }));

function assertNoOverlap(layout: Layout): void {
  const boxes = [...layout.nodes];
  for (const [a, p] of boxes) {
    for (const [b, q] of boxes) {
      if (a < b) assert.ok(p.x + O.nodeWidth <= q.x || q.x + O.nodeWidth <= p.x || p.y !== q.y, `${a} and ${b} overlap`);
    }
    assert.ok(p.x >= 0 && p.x + O.nodeWidth <= layout.width && p.y + O.nodeHeight <= layout.height, `${a} inside the picture`);
  }
}

/** The first and last point of a path ("M x,y ... x,y"). */
function ends(path: string): [[number, number], [number, number]] {
  const numbers = path.match(/-?[\d.]+/g)!.map(Number);
  return [[numbers[0]!, numbers[1]!], [numbers.at(-2)!, numbers.at(-1)!]];
}

describe('graph layout', () => {
  it('puts each node in the layer of its longest path from the root', () => {
    const layout = layoutGraph(['t', 'a', 'b', 'c'], edges('t>a', 'a>b', 'b>c', 't>c'), 't', O);
    assert.deepEqual([...layout.nodes].map(([k, n]) => [k, n.layer]), [['t', 0], ['a', 1], ['b', 2], ['c', 3]]);
    assert.deepEqual(layout.edges.map((e) => e.back), [false, false, false, false]);
    assertNoOverlap(layout);
    // The long edge bends around the boxes it passes: never through a's or b's column.
    const long = layout.edges[3]!.path.match(/L([\d.]+),/g)!.map((l) => Number(l.slice(1, -1)));
    for (const key of ['a', 'b']) {
      const box = layout.nodes.get(key)!;
      assert.ok(long.every((x) => x < box.x || x > box.x + O.nodeWidth), `the t -> c edge passes beside ${key}`);
    }
  });

  it('turns a cycle back up: the edge into an earlier layer is a back edge, from the top of its source to the bottom of its target', () => {
    const layout = layoutGraph(['t', 'wait', 'check', 'nudge', 'done'], edges('t>wait', 'wait>check', 'check>done', 'check>nudge', 'nudge>wait'), 't', O);
    const back = layout.edges.filter((e) => e.back);
    assert.deepEqual(back.map((e) => `${e.from}>${e.to}`), ['nudge>wait']);
    const [start, end] = ends(back[0]!.path);
    const [nudge, wait] = [layout.nodes.get('nudge')!, layout.nodes.get('wait')!];
    assert.equal(start[1], nudge.y, 'leaves the top of nudge');
    assert.equal(end[1], wait.y + O.nodeHeight, 'enters the bottom of wait');
    assert.deepEqual([...layout.nodes].map(([k, n]) => [k, n.layer]), [['t', 0], ['wait', 1], ['check', 2], ['nudge', 3], ['done', 3]]);
    assertNoOverlap(layout);
  });

  it('draws a loop on the side of its box, and two edges between the same boxes apart', () => {
    const layout = layoutGraph(['t', 'w', 'x'], edges('t>w', 'w>x', 'w>x', 'x>x'), 't', O);
    const [first, second, loop] = [layout.edges[1]!, layout.edges[2]!, layout.edges[3]!];
    assert.notEqual(first.path, second.path);
    assert.notEqual(first.label.x, second.label.x);
    assert.equal(loop.back, true);
    const box = layout.nodes.get('x')!;
    for (const [x] of ends(loop.path)) assert.equal(x, box.x + O.nodeWidth, 'out of and into its right side');
    assert.ok(layout.width >= box.x + O.nodeWidth + O.labelRoom, 'room for its label');
  });

  it('keeps a wide graph apart', () => {
    const keys = ['t', ...Array.from({ length: 12 }, (_, i) => `s${i}`)];
    const layout = layoutGraph(keys, [...keys.slice(1).map((k) => ({ from: 't', to: k })), ...edges('s0>s5', 's1>s5', 's3>s11', 's11>s2')], 't', O);
    assertNoOverlap(layout);
  });
});
