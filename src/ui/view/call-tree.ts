/**
 * A trace's calls as a tree (children in start order) with a timeline: each node's offset and
 * width as fractions of the trace's span, for the bars beside the tree.
 */

export interface TreeCall {
  id: string;
  parent_id?: string | null;
  started_at: string;
  ended_at?: string | null;
}

export interface TreeNode<C extends TreeCall> {
  call: C;
  depth: number;
  children: TreeNode<C>[];
  /** Where the call starts and how long it runs, as fractions of the whole trace (0..1). */
  offset: number;
  width: number;
}

/**
 * Calls whose parent is not among `calls` become roots, so a partial trace still shows every call.
 * A running call (no end) extends to the trace's last known time.
 */
export function buildCallTree<C extends TreeCall>(calls: readonly C[]): TreeNode<C>[] {
  const byId = new Map(calls.map((call) => [call.id, call]));
  const children = new Map<string | null, C[]>();
  for (const call of calls) {
    const parent = call.parent_id && byId.has(call.parent_id) && call.parent_id !== call.id ? call.parent_id : null;
    const list = children.get(parent) ?? [];
    list.push(call);
    children.set(parent, list);
  }
  const times = calls.flatMap((call) => [Date.parse(call.started_at), call.ended_at ? Date.parse(call.ended_at) : NaN]).filter(Number.isFinite);
  const start = times.length > 0 ? Math.min(...times) : 0;
  const end = times.length > 0 ? Math.max(...times) : 0;
  const span = end - start || 1;
  const seen = new Set<string>();
  const build = (call: C, depth: number): TreeNode<C> => {
    seen.add(call.id);
    const callStart = Date.parse(call.started_at);
    const callEnd = call.ended_at ? Date.parse(call.ended_at) : end;
    const offset = Number.isFinite(callStart) ? (callStart - start) / span : 0;
    const width = Number.isFinite(callStart) && Number.isFinite(callEnd) ? Math.max(0, callEnd - callStart) / span : 0;
    const kids = (children.get(call.id) ?? []).filter((child) => !seen.has(child.id)).sort(byStart);
    return { call, depth, offset, width, children: kids.map((child) => build(child, depth + 1)) };
  };
  return (children.get(null) ?? []).sort(byStart).map((root) => build(root, 0));
}

/** The tree in display order (depth first), for a flat list of rows. */
export function flattenTree<C extends TreeCall>(roots: readonly TreeNode<C>[]): TreeNode<C>[] {
  const rows: TreeNode<C>[] = [];
  const walk = (node: TreeNode<C>) => {
    rows.push(node);
    node.children.forEach(walk);
  };
  roots.forEach(walk);
  return rows;
}

function byStart(a: TreeCall, b: TreeCall): number {
  return a.started_at < b.started_at ? -1 : a.started_at > b.started_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
