import { getModel, type ModelRow } from "../../../store/models.js";
import { notFound } from "../../errors.js";

/** The caller's model or a 404; another entity's id is indistinguishable from an unknown one. */
export async function ownModel(db: Parameters<typeof getModel>[0], entity: string, id: string): Promise<ModelRow> {
  const model = await getModel(db, entity, id);
  if (!model) throw notFound(`Model '${id}' not found`);
  return model;
}
