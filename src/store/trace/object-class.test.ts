import { describe, expect, it } from "vitest";
import { objectClassesOf, objectKindOf, resolveObjectClasses, validateCustomTypeFileKeys } from "./object-class.js";

describe("object classes", () => {
  it("reads leaf and base classes from _bases", () => {
    expect(objectClassesOf({ _class_name: "Dataset", _bases: ["Object", "BaseModel"] })).toEqual({ baseObjectClass: "Dataset", leafObjectClass: "Dataset" });
    expect(objectClassesOf({ _class_name: "StringPrompt", _bases: ["Prompt", "Object", "BaseModel"] })).toEqual({ baseObjectClass: "Prompt", leafObjectClass: "StringPrompt" });
    expect(objectClassesOf({ _class_name: "Spec", _bases: ["BaseObject", "BaseModel"] })).toEqual({ baseObjectClass: "Spec", leafObjectClass: "Spec" });
  });

  it("finds none without the Object/BaseModel tail", () => {
    for (const val of [{ _class_name: "X", _bases: ["BaseModel"] }, { _class_name: "X", _bases: ["Foo", "BaseModel"] }, { _bases: ["Object", "BaseModel"] }, [1], "s", null]) {
      expect(objectClassesOf(val)).toBeNull();
    }
  });

  it("checks builtin_object_class against the value", () => {
    const dataset = { _class_name: "Dataset", _bases: ["Object", "BaseModel"] };
    expect(resolveObjectClasses(dataset, "Dataset")).toEqual({ baseObjectClass: "Dataset", leafObjectClass: "Dataset" });
    expect(() => resolveObjectClasses(dataset, "Model")).toThrow(/must match/);
    expect(() => resolveObjectClasses({ a: 1 }, "Leaderboard")).toThrow(/Unknown object class: Leaderboard/);
    expect(() => resolveObjectClasses([1], "Dataset")).toThrow(/non-dict/);
    expect(resolveObjectClasses({ a: 1 }, null)).toEqual({ baseObjectClass: null, leafObjectClass: null });
  });

  it("tells ops from objects", () => {
    expect(objectKindOf({ _type: "CustomWeaveType", weave_type: { type: "Op" }, files: {} })).toBe("op");
    expect(objectKindOf({ _type: "Op" })).toBe("op");
    expect(objectKindOf({ _type: "CustomWeaveType", weave_type: { type: "PIL.Image.Image" } })).toBe("object");
    expect(objectKindOf({ _type: "Dataset" })).toBe("object");
    expect(objectKindOf(["Op"])).toBe("object");
  });

  it("rejects custom-type file keys that escape their folder", () => {
    const op = (key: string) => ({ nested: [{ _type: "CustomWeaveType", files: { [key]: "d" } }] });
    expect(() => validateCustomTypeFileKeys(op("obj.py"))).not.toThrow();
    expect(() => validateCustomTypeFileKeys(op("a/../b.py"))).not.toThrow();
    expect(() => validateCustomTypeFileKeys(op("/etc/passwd"))).toThrow(/Invalid file path key/);
    expect(() => validateCustomTypeFileKeys(op("../x.py"))).toThrow(/Invalid file path key/);
    expect(() => validateCustomTypeFileKeys(op("a/../../x.py"))).toThrow(/Invalid file path key/);
  });
});
