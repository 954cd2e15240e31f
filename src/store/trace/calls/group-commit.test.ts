import { CompiledQuery } from "kysely";
import { describe, expect, it } from "vitest";
import { GroupCommit } from "./group-commit.js";

const statement = (text: string) => CompiledQuery.raw(text, []);

describe("group commit", () => {
  /** A commit that records its groups and fails any group holding a statement named "bad". */
  const recorder = (delayMs = 0) => {
    const commits: string[][] = [];
    const commit = async (groups: CompiledQuery[][]) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (groups.some((statements) => statements.some((s) => s.sql === "bad"))) throw new Error("bad statement");
      commits.push(groups.map((statements) => statements.map((s) => s.sql).join("+")));
    };
    return { commits, commit };
  };

  it("commits writes that arrive together in one transaction, in arrival order", async () => {
    const { commits, commit } = recorder();
    const group = new GroupCommit(commit);
    await Promise.all([group.write([statement("a1"), statement("a2")]), group.write([statement("b")]), group.write([statement("c")])]);
    expect(commits).toEqual([["a1+a2", "b", "c"]]);
  });

  it("commits writes that arrive during a commit in the next one", async () => {
    const { commits, commit } = recorder(20);
    const group = new GroupCommit(commit);
    const first = group.write([statement("a")]);
    // The first commit is under way (it takes 20 ms).
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(commits).toEqual([]);
    const later = [group.write([statement("b")]), group.write([statement("c")])];
    await Promise.all([first, ...later]);
    expect(commits).toEqual([["a"], ["b", "c"]]);
  });

  it("fails only the write at fault when a shared transaction fails", async () => {
    const { commits, commit } = recorder();
    const group = new GroupCommit(commit);
    const results = await Promise.allSettled([group.write([statement("a")]), group.write([statement("bad")]), group.write([statement("c")])]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(commits).toEqual([["a"], ["c"]]);
    await group.write([statement("d")]);
    expect(commits.at(-1)).toEqual(["d"]);
  });

  it("answers writers once their commit is on disk, while the next group commits", async () => {
    const commits: string[] = [];
    const syncs: (() => void)[] = [];
    const group = new GroupCommit(async (groups) => {
      commits.push(groups.map((statements) => statements.map((s) => s.sql).join("+")).join(","));
      return { synced: new Promise<void>((resolve) => syncs.push(resolve)) };
    });
    let firstDone = false;
    const first = group.write([statement("a")]).then(() => (firstDone = true));
    await new Promise((resolve) => setImmediate(resolve));
    const second = group.write([statement("b")]);
    await new Promise((resolve) => setImmediate(resolve));
    // Both are committed; neither is on disk yet.
    expect(commits).toEqual(["a", "b"]);
    expect(firstDone).toBe(false);
    syncs[0]!();
    await first;
    syncs[1]!();
    await second;
  });

  it("fails the writers of a group whose disk sync fails", async () => {
    const group = new GroupCommit(async () => ({ synced: Promise.reject(new Error("EIO")) }));
    await expect(group.write([statement("a")])).rejects.toThrow("EIO");
  });

  it("settles an empty write at once", async () => {
    const { commits, commit } = recorder();
    await new GroupCommit(commit).write([]);
    expect(commits).toEqual([]);
  });
});
