// Adds a skill folder and a prompt folder that ship beside the extension (`resources_discover`).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export default function (pi: any) {
	pi.on("resources_discover", (event: any) => {
		if (event.reason !== "startup") return undefined;
		return {
			skillPaths: [join(here, "discovered", "skills")],
			promptPaths: [join(here, "discovered", "prompts")],
		};
	});
}
