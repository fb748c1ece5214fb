// pi's `CustomEditor` for extensions that replace the input editor (`ctx.ui.setEditorComponent`):
// pi-tui's Editor with the app's keys in front of it. The app's actions are handlers the screen
// installs (`onEscape`, `onCtrlD`, `actionHandlers`), which tell pi to carry the action out;
// every other key edits the text.
//
// pi-tui loads only when the first editor is made: the class chains itself to pi-tui's Editor
// then, so importing pi-coding-agent stays cheap for extensions that never make one.

/**
 * The `CustomEditor` class for a host whose pi-tui module `loadTui()` returns. A plain
 * constructor function, so `class VimEditor extends CustomEditor` works before pi-tui is loaded.
 */
export function createCustomEditorClass(loadTui) {
	let Editor;
	const editorClass = () => {
		if (!Editor) {
			Editor = loadTui().Editor;
			Object.setPrototypeOf(CustomEditor.prototype, Editor.prototype);
			Object.setPrototypeOf(CustomEditor, Editor);
		}
		return Editor;
	};

	function CustomEditor(tui, theme, keybindings, options) {
		if (!new.target) throw new TypeError("Class constructor CustomEditor cannot be invoked without 'new'");
		const self = Reflect.construct(editorClass(), [tui, theme, options], new.target);
		self.keybindings = keybindings;
		self.embedWorkingStatus = options?.embedWorkingStatus ?? false;
		self.actionHandlers = new Map();
		self.onEscape = undefined;
		self.onCtrlD = undefined;
		self.onPasteImage = undefined;
		self.onExtensionShortcut = undefined;
		self.workingStatusIndicator = undefined;
		return self;
	}

	const matches = (editor, data, id) => Boolean(editor.keybindings?.matches?.(data, id));
	const base = () => editorClass().prototype;

	Object.assign(CustomEditor.prototype, {
		setWorkingStatusIndicator(indicator) {
			this.workingStatusIndicator = indicator;
		},

		/** Run `handler` for the app action `action` (a keybinding id such as `app.clear`). */
		onAction(action, handler) {
			this.actionHandlers.set(action, handler);
		},

		handleInput(data) {
			if (this.onExtensionShortcut?.(data)) return;
			const menuOpen = this.isShowingAutocomplete?.() ?? false;
			// Page keys move an open completion menu rather than running an action bound to them.
			if (menuOpen && (matches(this, data, "tui.select.pageUp") || matches(this, data, "tui.select.pageDown"))) {
				base().handleInput.call(this, data);
				return;
			}
			if (matches(this, data, "app.clipboard.pasteImage")) {
				this.onPasteImage?.();
				return;
			}
			if (matches(this, data, "app.interrupt")) {
				// With the completion menu open, Escape closes the menu instead.
				const handler = menuOpen ? undefined : (this.onEscape ?? this.actionHandlers.get("app.interrupt"));
				if (handler) handler();
				else base().handleInput.call(this, data);
				return;
			}
			if (matches(this, data, "app.exit") && this.getText().length === 0) {
				(this.onCtrlD ?? this.actionHandlers.get("app.exit"))?.();
				return;
			}
			// A key bound to history browsing stays the editor's even when an action shares it.
			if (matches(this, data, "tui.editor.historyPrevious") || matches(this, data, "tui.editor.historyNext")) {
				base().handleInput.call(this, data);
				return;
			}
			for (const [action, handler] of this.actionHandlers) {
				if (action === "app.interrupt" || action === "app.exit") continue;
				if (matches(this, data, action)) {
					handler();
					return;
				}
			}
			base().handleInput.call(this, data);
		},
	});
	return CustomEditor;
}

/** The app actions a replacement editor hands back to pi (those pi's own editor binds). */
export const EDITOR_APP_ACTIONS = [
	"app.clear",
	"app.suspend",
	"app.thinking.cycle",
	"app.thinking.toggle",
	"app.model.cycleForward",
	"app.model.cycleBackward",
	"app.model.select",
	"app.tools.expand",
	"app.editor.external",
	"app.message.followUp",
	"app.message.dequeue",
	"app.message.copy",
	"app.session.new",
	"app.session.tree",
	"app.session.fork",
	"app.session.resume",
];
