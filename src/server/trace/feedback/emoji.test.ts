import { describe, expect, it } from "vitest";
import { countEmoji, demojize, detone } from "./emoji.js";

describe("reaction emoji", () => {
  it("counts emoji, including sequences, flags and unqualified forms", () => {
    expect(countEmoji("👍")).toBe(1);
    expect(countEmoji("👩🏾‍💻")).toBe(1);
    expect(countEmoji("🏳️‍🌈")).toBe(1);
    expect(countEmoji("❤")).toBe(1);
    expect(countEmoji("👍👎")).toBe(2);
    expect(countEmoji("ok 1")).toBe(0);
  });

  it("names emoji with CLDR short names and skin tones, and detones them", () => {
    expect(demojize("👍🏽")).toBe(":thumbs_up_medium_skin_tone:");
    expect(demojize("👩🏾‍💻")).toBe(":woman_technologist_medium-dark_skin_tone:");
    expect(demojize("❤️")).toBe(":red_heart:");
    expect(detone("👍🏽")).toBe("👍");
    expect(demojize("a👍")).toBe("a:thumbs_up:");
  });
});
