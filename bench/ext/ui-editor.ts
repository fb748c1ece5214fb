// A replacement editor (CustomEditor) for the keystroke bench: every key goes through the
// extension host and back before the frame shows it.
import { CustomEditor } from "@earendil-works/pi-coding-agent";

export default function (pi: any) {
	pi.on("session_start", (_event: any, ctx: any) => {
		ctx.ui.setEditorComponent((tui: any, theme: any, kb: any) => new CustomEditor(tui, theme, kb));
	});
}
