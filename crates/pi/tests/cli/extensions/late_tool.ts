// After the first turn registers a tool and turns it on in the same handler: the run's next
// request declares it.
import { Type } from "typebox";

export default function (pi: any) {
	let turns = 0;
	pi.on("turn_end", () => {
		turns += 1;
		if (turns !== 1) return;
		pi.registerTool({
			name: "late_tool",
			label: "Late tool",
			description: "A tool registered after the extension loaded.",
			parameters: Type.Object({}),
			async execute() {
				return { content: [{ type: "text", text: "late" }], details: {} };
			},
		});
		pi.setActiveTools([...pi.getActiveTools(), "late_tool"]);
	});
}
