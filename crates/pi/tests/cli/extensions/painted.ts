// A tool whose renderers colour their lines with the theme, for the HTML export.
import { Type } from "typebox";

export default function (pi: any) {
	pi.registerTool({
		name: "paint",
		label: "Paint",
		description: "Paints",
		parameters: Type.Object({}),
		async execute() {
			return { content: [{ type: "text", text: "painted" }], details: {} };
		},
		renderCall: (_args: any, theme: any) => ({ render: () => [theme.fg("accent", "PAINT CALL")], invalidate() {} }),
		renderResult: (_result: any, _options: any, theme: any) => ({
			render: () => [theme.fg("success", "PAINT RESULT")],
			invalidate() {},
		}),
	});
}
