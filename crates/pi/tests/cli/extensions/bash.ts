// Answers user shell commands: `fake` gets a made-up result, `boom` throws, the rest run.
export default function (pi: any) {
	pi.on("user_bash", (event: any) => {
		if (event.command === "fake") {
			return { result: { output: `faked in ${event.cwd}`, exitCode: 0, cancelled: false, truncated: false } };
		}
		if (event.command === "boom") throw new Error("no shell for you");
		return undefined;
	});
}
