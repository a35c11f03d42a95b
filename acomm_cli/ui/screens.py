"""Modal screens: the key help, a form (send, filter, ack), and the confirmation every
action passes through, which shows the command line the action equals."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

KEYS = [
    ("?", "this help"),
    ("tab / shift+tab", "move between panes (or click one)"),
    ("↑ ↓ / click", "move in a table; the feed's row is the selected message"),
    ("/", "filter the feed: channel, from, type, topic pattern, status"),
    ("s", "send a message (to a channel, or @agent[,agent] directly)"),
    ("w", "show or hide the side panes (narrow terminals: one column at a time)"),
    ("b", "team broadcast: to every member of a channel"),
    ("a", "acknowledge the selected message"),
    ("r", "replay the selected message's dead letters"),
    ("x", "discard the selected message's dead letters"),
    ("p / u", "pause / resume the channel selected in the channels pane"),
    ("ctrl+r", "refresh now"),
    ("q", "quit"),
]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="wide"):
            yield Label("acomm ui · keys", classes="title")
            yield Static("\n".join(f"{k:<16} {what}" for k, what in KEYS))
            yield Static(
                "Every action asks for confirmation first and goes through the same "
                "engine function as its command. With --read-only (or on a read-only "
                "store) actions are refused.",
                classes="note",
            )
            yield Button("Close", id="close")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """y / enter confirms, n / escape cancels; the buttons do the same with the mouse."""

    BINDINGS = [Binding("y", "answer(True)", "yes"), Binding("n,escape", "answer(False)", "no")]

    def __init__(self, question: str, command: str) -> None:
        super().__init__()
        self.question = question
        self.command = command

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question, classes="title", markup=False)
            yield Static(f"same as: {self.command}", id="command", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Yes (y)", id="yes", variant="primary")
                yield Button("No (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class FormScreen(ModalScreen[dict[str, str] | None]):
    """A few labelled inputs. Enter (or OK) submits once every required field is filled, else
    it moves to the first empty one; tab moves between fields; escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(
        self,
        title: str,
        fields: list[tuple[str, str, str]],
        *,
        focus: str | None = None,
        required: tuple[str, ...] = (),
    ) -> None:
        """fields: (name, label, initial value); focus: the field the cursor starts in (else
        the first empty one); required: the fields enter will not submit without."""
        super().__init__()
        self.title_text = title
        self.fields = fields
        self.start = focus
        self.required = required

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, classes="title")
            for name, label, value in self.fields:
                yield Label(label, classes="field")
                yield Input(value=value, id=f"f-{name}", compact=True)
            with Horizontal(classes="buttons"):
                yield Button("OK (enter)", id="ok", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        first_empty = next((n for n, _l, v in self.fields if not v), self.fields[0][0])
        self.query_one(f"#f-{self.start or first_empty}", Input).focus()

    def values(self) -> dict[str, str]:
        return {n: self.query_one(f"#f-{n}", Input).value for n, _l, _v in self.fields}

    def on_input_submitted(self, event: Input.Submitted) -> None:
        values = self.values()
        missing = next((n for n in self.required if not values[n].strip()), None)
        if missing is not None:
            self.query_one(f"#f-{missing}", Input).focus()
        elif self.required:
            self.dismiss(values)
        else:  # no required field: enter walks the fields, the last one submits
            inputs = list(self.query(Input))
            i = inputs.index(event.input)
            if i + 1 < len(inputs):
                inputs[i + 1].focus()
            else:
                self.dismiss(values)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(self.values() if event.button.id == "ok" else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
