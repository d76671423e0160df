import { issue, type Issue } from '../../formats/issue.ts';

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
 */
export function checkTaskGraph(tasks: readonly TaskNode[], display: string): Issue[] {
  const issues: Issue[] = [];
  const byId = new Map<string, number>();
  const byPr = new Map<string, number[]>();
  tasks.forEach((task, index) => {
    if (!byId.has(task.id)) byId.set(task.id, index);
    if (task.pr !== undefined) {
      const carriers = byPr.get(task.pr);
      if (carriers === undefined) byPr.set(task.pr, [index]);
      else carriers.push(index);
    }
  });

  const edges: number[][] = tasks.map((task, index) => {
    const out: number[] = [];
    task.dependsOn.forEach((ref, k) => {
      const target = byId.get(ref);
      const carriers = byPr.get(ref);
      if (target !== undefined) {
        out.push(target);
      } else if (carriers !== undefined) {
        for (const carrier of carriers) if (carrier !== index) out.push(carrier);
      } else {
        issues.push(issue('ARTIFACT_DANGLING_REF', `${display}:${task.line}.depends_on[${k}]`, `no task or pr label ${ref}`));
      }
    });
    return out;
  });

  for (const cycle of findCycles(edges)) {
    const names = cycle.map((index) => tasks[index]!.id);
    const first = tasks[cycle[0]!]!;
    issues.push(issue('ARTIFACT_DEPENDENCY_CYCLE', `${display}:${first.line}.depends_on`, [...names, names[0]].join(' -> ')));
  }
  return issues;
}

/**
 * One cycle per strongly connected component that has one (Tarjan, iterative so a long
 * chain cannot overflow the stack), each as the node list of a path back to its start.
 */
export function findCycles(edges: readonly (readonly number[])[]): number[][] {
  const n = edges.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const cycles: number[][] = [];
  let counter = 0;

  for (let root = 0; root < n; root++) {
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
        component.push(member);
      } while (member !== node);
      const selfLoop = component.length === 1 && edges[node]!.includes(node);
      if (component.length > 1 || selfLoop) cycles.push(cycleWithin(edges, component));
    }
  }
  return cycles.sort((a, b) => a[0]! - b[0]!);
}

/** A path from the component's first node back to it, staying inside the component. */
function cycleWithin(edges: readonly (readonly number[])[], component: readonly number[]): number[] {
  const members = new Set(component);
  // A loop, not Math.min(...component): a component can outgrow the argument limit.
  let start = component[0]!;
  for (const member of component) if (member < start) start = member;
  const cameFrom = new Map<number, number>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const next of edges[node]!) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [node];
        for (let at = node; at !== start; ) path.push((at = cameFrom.get(at)!));
        return path.reverse();
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}
