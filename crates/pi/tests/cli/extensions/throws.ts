// A handler that throws: reported on stderr, the prompt goes on.
export default function (pi: any) {
	pi.on("input", () => {
		throw new Error("input handler broke");
	});
}
