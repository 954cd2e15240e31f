import { describe, expect, it } from "vitest";
import { loadTinyModel } from "../../testing/models.js";
import type { AdapterRef } from "../api.js";
import type { LinearAdapter } from "../model/types.js";
import { AdapterCache } from "./adapter-cache.js";

describe("AdapterCache", () => {
  it("loads each adapter once by identity and drops the least recently used beyond its capacity", () => {
    const loads: string[] = [];
    const loader = (ref: AdapterRef): LinearAdapter => {
      loads.push(ref.id);
      return { apply: () => undefined };
    };
    const cache = new AdapterCache(loadTinyModel("qwen2"), loader, 2);
    const a = cache.get({ id: "a", dir: "/a" });
    expect(cache.get({ id: "a", dir: "/elsewhere" })).toBe(a);
    cache.get({ id: "b", dir: "/b" });
    cache.get({ id: "a", dir: "/a" });
    cache.get({ id: "c", dir: "/c" }); // drops b, the least recently used
    cache.get({ id: "a", dir: "/a" });
    cache.get({ id: "b", dir: "/b" });
    expect(loads).toEqual(["a", "b", "c", "b"]);
    expect(cache.size).toBe(2);
  });
});
