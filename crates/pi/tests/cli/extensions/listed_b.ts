// The second `hey` (see listed_a.ts).
export default function (pi: any) {
	pi.registerCommand("hey", { description: "Say hey again", handler: async () => {} });
}
