// CopyButton: writes the model's `text` to the clipboard when clicked.
// On success it counts the copy in `copies`; when the browser refuses (no secure context,
// no permission) it reports why in `error`, and Python shows the text to copy by hand.
function render({ model, el }) {
  const button = document.createElement("button");
  button.className = "jupyter-button widget-button procgen-copy-button";
  button.title = model.get("tooltip");
  const label = () => {
    button.textContent = model.get("description");
  };
  label();
  model.on("change:description", label);
  button.addEventListener("click", async () => {
    let error = "";
    try {
      if (!navigator.clipboard) {
        throw new Error("this page has no clipboard (it is not a secure context)");
      }
      await navigator.clipboard.writeText(model.get("text"));
    } catch (err) {
      error = String(err && err.message ? err.message : err);
    }
    model.set("error", error);
    model.set("copies", model.get("copies") + 1);
    model.save_changes();
  });
  el.appendChild(button);
}

export default { render };
