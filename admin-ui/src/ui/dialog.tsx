// A modal built on <dialog>: the browser traps focus, Escape closes it, focus returns after.
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

export function Dialog({ title, open, onClose, children, footer, dismissable = true }: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ComponentChildren;
  footer?: ComponentChildren;
  /** False keeps the dialog open on Escape (the one-time plaintext must be acknowledged). */
  dismissable?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (open && !el.open) el.showModal();
    if (!open && el.open) el.close();
  }, [open]);
  // Each dialog its own title id: several share a page (delete, rotate, the one-time key).
  const titleId = useId();
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby={titleId}
      onCancel={(e) => { e.preventDefault(); if (dismissable) onClose(); }}
    >
      <div class="dialog-body">
        <h2 id={titleId}>{title}</h2>
        {children}
      </div>
      {footer && <div class="dialog-footer">{footer}</div>}
    </dialog>
  );
}

export function ConfirmDialog({ open, title, message, confirmLabel, busy, error, onConfirm, onClose }: {
  open: boolean;
  title: string;
  message: ComponentChildren;
  confirmLabel: string;
  busy?: boolean;
  error?: ComponentChildren;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <Dialog
      title={title}
      open={open}
      onClose={onClose}
      footer={<>
        <button type="button" class="btn" onClick={onClose}>Cancel</button>
        <button type="button" class="btn btn-danger" disabled={busy} onClick={onConfirm}>{busy ? 'Working…' : confirmLabel}</button>
      </>}
    >
      <p>{message}</p>
      {error}
    </Dialog>
  );
}
