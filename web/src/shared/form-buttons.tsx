/** A form's submit button and its Cancel, side by side. */
export function FormButtons({ submit, onCancel, busy, class: className = 'button-row' }: { submit: string; onCancel(): void; busy?: boolean; class?: string }) {
  return (
    <div class={className}>
      <button type="submit" disabled={busy}>
        {submit}
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}
