/**
 * Small line icons drawn inline, for controls that would otherwise be an emoji: a system without
 * an emoji font (a Raspberry Pi's, many Linux desktops) shows an emoji as an empty box. Each is
 * decoration only (`aria-hidden`): the control it sits in carries the name (`aria-label` or its
 * text), and `currentColor` gives it the control's colour in light and dark alike.
 */
const PATHS = {
  'thumb-up': 'M3 10h4v11H3zM7 10l4-8c1.4 0 2.5 1.1 2.5 2.5V9H19a2 2 0 0 1 2 2.3l-1.3 7.4A2 2 0 0 1 17.7 21H7',
  'thumb-down': 'M21 14h-4V3h4zM17 14l-4 8c-1.4 0-2.5-1.1-2.5-2.5V15H5a2 2 0 0 1-2-2.3l1.3-7.4A2 2 0 0 1 6.3 3H17',
  close: 'M6 6l12 12M18 6L6 18',
  file: 'M6 2h8l5 5v15H6zM14 2v5h5',
  'arrow-up': 'M12 20V5M5 11l7-7 7 7',
  'arrow-down': 'M12 4v15M5 13l7 7 7-7',
} as const;

export type IconName = keyof typeof PATHS;

export function Icon({ name }: { name: IconName }) {
  return (
    <svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">
      <path d={PATHS[name]} />
    </svg>
  );
}
