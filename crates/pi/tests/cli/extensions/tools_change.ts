// After the first turn the run goes on with `read` and `grep` only (grep is a built-in that
// starts inactive), so the next request declares one tool added and three removed.
export default function (pi: any) {
	let turns = 0;
	pi.on("turn_end", () => {
		turns += 1;
		if (turns === 1) pi.setActiveTools(["read", "grep"]);
	});
}
