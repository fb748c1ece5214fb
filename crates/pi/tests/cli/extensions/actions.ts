// Session actions from a handler: a custom entry, a session name and the active tools.
export default function (pi: any) {
	pi.on("input", () => {
		pi.appendEntry("glue-note", { seen: true });
		pi.setSessionName("named by an extension");
		pi.setActiveTools(["read"]);
		return { action: "continue" };
	});
}
