// Registers a boolean and a string flag and shows their values in the prompt it rewrites.
export default function (pi: any) {
	pi.registerFlag("plan", { type: "boolean", default: false, description: "Plan first" });
	pi.registerFlag("level", { type: "string", default: "low", description: "How hard" });
	pi.on("input", (event: any) => ({
		action: "transform",
		text: `${event.text} plan=${pi.getFlag("plan")} level=${pi.getFlag("level")}`,
	}));
}
