/** A parsed Weave ref (`spec/trace.md` §2.1). */
export type ParsedRef =
  | { kind: "object" | "op"; projectId: string; name: string; version: string; extra: string[] }
  | { kind: "call"; projectId: string; id: string }
  | { kind: "table"; projectId: string; digest: string; extra: string[] };

/** Parses `weave:///entity/project/(object|op|call|table)/...`; undefined when it is not a well-formed ref. */
export function parseRef(ref: string): ParsedRef | undefined {
  if (!ref.startsWith("weave:///")) return undefined;
  const [entity, project, kind, target, ...extra] = ref.slice("weave:///".length).split("/");
  if (!entity || !project || !kind || !target) return undefined;
  const projectId = `${entity}/${project}`;
  if (kind === "call") return extra.length === 0 ? { kind, projectId, id: target } : undefined;
  if (kind === "table") return { kind, projectId, digest: target, extra };
  if (kind !== "object" && kind !== "op") return undefined;
  const colon = target.lastIndexOf(":");
  if (colon <= 0 || colon === target.length - 1 || extra.length % 2 !== 0) return undefined;
  return { kind, projectId, name: target.slice(0, colon), version: target.slice(colon + 1), extra };
}
