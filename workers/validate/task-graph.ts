import { issue } from '../../formats/codes/issue.ts';
import { IssueList } from '../../formats/schemas/issue-list.ts';

/** What the graph keeps of one task row: enough to resolve references and find cycles. */
export interface TaskNode {
  readonly id: string;
  readonly line: number;
  readonly pr: string | undefined;
  readonly dependsOn: readonly string[];
}

/**
 * Resolves `depends_on` (a task id, or a `pr` label some task carries) and reports every
 * reference that names nothing, then every dependency cycle once, as `a -> b -> a`.
 * A dependency on a label means every other task carrying it; a task's own label is not
 * a dependency on itself.
 *
 * A label is expanded once, not once per dependent: 20,000 tasks that all carry `x` and
 * depend on `x` would otherwise be 400 million edges. For cycle detection each label
 * becomes a chain of helper nodes (see {@link labelGraph}); paths are then found over the
 * tasks alone, visiting each label's carriers once.
 */
export function checkTaskGraph(tasks: readonly TaskNode[], display: string, issues = new IssueList()): IssueList {
  const byId = new Map<string, number>();
  const labels = new Map<string, number>();
  const carriers: number[][] = [];
  tasks.forEach((task, index) => {
    if (!byId.has(task.id)) byId.set(task.id, index);
    if (task.pr !== undefined) {
      let label = labels.get(task.pr);
      if (label === undefined) {
        labels.set(task.pr, (label = carriers.length));
        carriers.push([]);
      }
      carriers[label]!.push(index);
    }
  });

  // Each dependency in order: a task index, or ~label for every carrier of a label.
  const deps: number[][] = tasks.map((task) => {
    const out: number[] = [];
    task.dependsOn.forEach((ref, k) => {
      const target = byId.get(ref);
      const label = target === undefined ? labels.get(ref) : undefined;
      if (target !== undefined) out.push(target);
      else if (label !== undefined) out.push(~label);
      else issues.push(issue('ARTIFACT_DANGLING_REF', `${display}:${task.line}.depends_on[${k}]`, `no task or pr label ${ref}`));
    });
    return out;
  });

  const labelOf = Int32Array.from(tasks, (task) => (task.pr === undefined ? -1 : labels.get(task.pr)!));
  const graph = { tasks: tasks.length, deps, carriers, labelOf };
  for (const cycle of findCycles(labelGraph(graph), tasks.length, (component) => cycleWithin(graph, component))) {
    const names = cycle.map((index) => tasks[index]!.id);
    const first = tasks[cycle[0]!]!;
    issues.push(issue('ARTIFACT_DEPENDENCY_CYCLE', `${display}:${first.line}.depends_on`, [...names, names[0]].join(' -> ')));
  }
  return issues;
}

interface TaskGraph {
  readonly tasks: number;
  /** Per task, its dependencies in order: a task index, or ~label. */
  readonly deps: readonly (readonly number[])[];
  /** Per label, its carriers in file order. */
  readonly carriers: readonly (readonly number[])[];
  /** Per task, the label it carries, or -1. */
  readonly labelOf: Int32Array;
}

/**
 * The dependency graph with each label's fan-out shared, in linear size: for carriers
 * c1..ck, prefix nodes P_i -> {c1..ci} and suffix nodes S_i -> {ci..ck}. A task that does
 * not carry the label points at P_k (every carrier); carrier cj points at P_(j-1) and
 * S_(j+1) (every carrier but itself). Tasks reach exactly the tasks they reach in the
 * full graph, so its strongly connected components, restricted to tasks, are the same.
 */
export function labelGraph(graph: TaskGraph): number[][] {
  const edges: number[][] = Array.from({ length: graph.tasks }, () => []);
  const prefixOf: number[] = [];
  const suffixOf: number[] = [];
  const positionOf: Map<number, number>[] = [];
  for (const carriers of graph.carriers) {
    const k = carriers.length;
    const prefix = edges.length;
    for (let i = 0; i < k; i++) edges.push(i === 0 ? [carriers[i]!] : [prefix + i - 1, carriers[i]!]);
    const suffix = edges.length;
    for (let i = 0; i < k; i++) edges.push(i === k - 1 ? [carriers[i]!] : [suffix + i + 1, carriers[i]!]);
    prefixOf.push(prefix);
    suffixOf.push(suffix);
    positionOf.push(new Map(carriers.map((task, i) => [task, i])));
  }
  graph.deps.forEach((deps, task) => {
    for (const dep of deps) {
      if (dep >= 0) {
        edges[task]!.push(dep);
        continue;
      }
      const label = ~dep;
      const k = graph.carriers[label]!.length;
      const j = positionOf[label]!.get(task);
      if (j === undefined) {
        edges[task]!.push(prefixOf[label]! + k - 1);
        continue;
      }
      if (j > 0) edges[task]!.push(prefixOf[label]! + j - 1);
      if (j < k - 1) edges[task]!.push(suffixOf[label]! + j + 1);
    }
  });
  return edges;
}

/**
 * One cycle per strongly connected component that has one (Tarjan, iterative so a long
 * chain cannot overflow the stack), each as the node list of a path back to its start.
 * Nodes from `real` on are helpers: they are left out of components, and `pathOf` turns
 * a component (of real nodes, in any order) into its cycle. By default the cycle is a
 * shortest path over `edges` from the component's first node back to it.
 */
export function findCycles(
  edges: readonly (readonly number[])[],
  real = edges.length,
  pathOf: (component: readonly number[]) => number[] = (component) => cycleOverEdges(edges, component),
): number[][] {
  const n = edges.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const cycles: number[][] = [];
  let counter = 0;

  for (let root = 0; root < real; root++) {
    if (index[root] !== -1) continue;
    const work: [node: number, edge: number][] = [[root, 0]];
    index[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const [node, edge] = frame;
      const next = edges[node]![edge];
      if (next !== undefined) {
        frame[1] += 1;
        if (index[next] === -1) {
          index[next] = low[next] = counter++;
          stack.push(next);
          onStack[next] = 1;
          work.push([next, 0]);
        } else if (onStack[next]) {
          low[node] = Math.min(low[node]!, index[next]!);
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low[parent[0]] = Math.min(low[parent[0]]!, low[node]!);
      if (low[node] !== index[node]) continue;
      const component: number[] = [];
      let member: number;
      do {
        member = stack.pop()!;
        onStack[member] = 0;
        if (member < real) component.push(member);
      } while (member !== node);
      // Helpers never loop on themselves, and a helper chain never leads back to the task
      // that entered it, so a component of one task is a cycle only by a direct self-edge.
      const selfLoop = component.length === 1 && edges[component[0]!]!.includes(component[0]!);
      if (component.length > 1 || selfLoop) cycles.push(pathOf(component));
    }
  }
  return cycles.sort((a, b) => a[0]! - b[0]!);
}

/** A shortest path from the component's first node back to it, staying inside it. */
function cycleOverEdges(edges: readonly (readonly number[])[], component: readonly number[]): number[] {
  return shortestCycle(component, (node, visit) => {
    for (const next of edges[node]!) if (visit(next)) return true;
    return false;
  });
}

/**
 * The same over tasks, with labels expanded as the full graph would (carriers in file
 * order, never the task itself), but each label's carriers walked once: after that they
 * are all visited, and only the start, if it carries the label, can still matter.
 */
function cycleWithin(graph: TaskGraph, component: readonly number[]): number[] {
  const expanded = new Uint8Array(graph.carriers.length);
  let start = -1;
  return shortestCycle(component, (node, visit, first) => {
    start = first;
    for (const dep of graph.deps[node]!) {
      if (dep >= 0) {
        if (visit(dep)) return true;
        continue;
      }
      const label = ~dep;
      const carriers = graph.carriers[label]!;
      if (expanded[label] === 1) {
        if (node !== start && graph.labelOf[start] === label && visit(start)) return true;
        continue;
      }
      for (const carrier of carriers) if (carrier !== node && visit(carrier)) return true;
      // Walked from the start itself, the start was skipped: walk again from any other node.
      if (node !== start) expanded[label] = 1;
    }
    return false;
  });
}

/**
 * Breadth-first from the component's first node: `neighbours(node, visit, start)` calls
 * visit on each successor in order and stops when it returns true (the start reached).
 */
function shortestCycle(
  component: readonly number[],
  neighbours: (node: number, visit: (next: number) => boolean, start: number) => boolean,
): number[] {
  const members = new Set(component);
  // A loop, not Math.min(...component): a component can outgrow the argument limit.
  let start = component[0]!;
  for (const member of component) if (member < start) start = member;
  const cameFrom = new Map<number, number>();
  const queue = [start];
  let found = -1;
  for (let head = 0; head < queue.length && found === -1; head++) {
    const node = queue[head]!;
    neighbours(
      node,
      (next) => {
        if (!members.has(next)) return false;
        if (next === start) {
          found = node;
          return true;
        }
        if (!cameFrom.has(next)) {
          cameFrom.set(next, node);
          queue.push(next);
        }
        return false;
      },
      start,
    );
  }
  if (found === -1) return [start];
  const path = [found];
  for (let at = found; at !== start; ) path.push((at = cameFrom.get(at)!));
  return path.reverse();
}
