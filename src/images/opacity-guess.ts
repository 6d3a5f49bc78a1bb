/**
 * Whether to start an 8-bit RGBA image's JPEG encode before its pixels say it is opaque.
 *
 * Started early, beside the copy out of the pixels and the alpha check, an opaque image converts
 * in the time of the plain transcode (bench/RESULTS.md change 25). A transparent one throws that
 * encode away: in a 12 MP test, ~70 % more CPU for its conversion. Images tend to come in runs
 * (a user's screenshots, a set of stickers or logos), so the guess is the last RGBA image's
 * answer: a run of transparent images pays for one early encode, not one each.
 */
export interface OpacityGuess {
  /** Start the encode early for the next RGBA image? */
  likelyOpaque(): boolean;
  /** What the last RGBA image turned out to be. */
  saw(opaque: boolean): void;
}

export function createOpacityGuess(): OpacityGuess {
  let last = true;
  return {
    likelyOpaque: () => last,
    saw(opaque) {
      last = opaque;
    },
  };
}
