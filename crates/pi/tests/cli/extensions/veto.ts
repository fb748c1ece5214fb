// Cancels every new session and every clone; lets the rest through.
export default function (pi: any) {
	pi.on("session_before_switch", (event: any) => (event.reason === "new" ? { cancel: true } : undefined));
	pi.on("session_before_fork", (event: any) => (event.position === "at" ? { cancel: true } : undefined));
	pi.on("session_shutdown", () => {
		throw new Error("the session was replaced");
	});
}
