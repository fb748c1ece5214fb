// Shows something while pi starts (`session_start`): a status, a notice and a title, which an
// RPC client must receive.
export default function (pi: any) {
	pi.on("session_start", (_event: any, ctx: any) => {
		ctx.ui.setStatus("startup", "Ready");
		ctx.ui.notify("started", "info");
		ctx.ui.setTitle("pi startup");
	});
}
