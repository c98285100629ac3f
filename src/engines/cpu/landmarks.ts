// Landmark indices of the 468-point face mesh (MediaPipe topology, as output by FaceMesh) that the
// engine uses, and geometric helpers over flat [x0, y0, x1, y1, ...] arrays.

/** Lip rings, corner to corner (image left to right on a frontal face). Upper rings exclude the corners. */
export const LIPS = {
  upperOuter: [185, 40, 39, 37, 0, 267, 269, 270, 409],
  upperSemiOuter: [184, 74, 73, 72, 11, 302, 303, 304, 408],
  upperSemiInner: [183, 42, 41, 38, 12, 268, 271, 272, 407],
  upperInner: [191, 80, 81, 82, 13, 312, 311, 310, 415],
  // Lower rings include the corners at both ends (11 points).
  lowerOuter: [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291],
  lowerSemiOuter: [76, 77, 90, 180, 85, 16, 315, 404, 320, 307, 306],
  lowerSemiInner: [62, 96, 89, 179, 86, 15, 316, 403, 319, 325, 292],
  lowerInner: [78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308],
} as const;

/** Mouth corners: outer (61, 291) and inner (78, 308). */
export const CORNER_OUTER = [61, 291] as const;
export const CORNER_INNER = [78, 308] as const;
export const UPPER_LIP_CENTER = 13;
export const LOWER_LIP_CENTER = 14;

/** Face outline, clockwise from the top of the forehead. */
export const FACE_OVAL = [
  10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152, 148, 176, 149,
  150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109,
];
export const CHIN = 152;
export const NOSE_TIP = 1;
export const NOSE_BOTTOM = 2;
/** Outer eye corners (image left, image right on a frontal face) and inner ones. */
export const EYE_OUTER = [33, 263] as const;
export const EYE_INNER = [133, 362] as const;

/** The inner lip contour as a closed polygon: upper inner left to right, then lower inner right to left. */
export const INNER_LIP_POLYGON: readonly number[] = [
  78,
  ...LIPS.upperInner,
  308,
  ...LIPS.lowerInner.slice(1, -1).reverse(),
];
/** The outer lip contour as a closed polygon. */
export const OUTER_LIP_POLYGON: readonly number[] = [
  61,
  ...LIPS.upperOuter,
  291,
  ...LIPS.lowerOuter.slice(1, -1).reverse(),
];

export function px(points: ArrayLike<number>, i: number): number {
  return points[2 * i];
}
export function py(points: ArrayLike<number>, i: number): number {
  return points[2 * i + 1];
}
export function dist(points: ArrayLike<number>, a: number, b: number): number {
  return Math.hypot(points[2 * a] - points[2 * b], points[2 * a + 1] - points[2 * b + 1]);
}

/** Eye-to-eye roll angle (radians) of a face. */
export function rollAngle(points: ArrayLike<number>): number {
  const [a, b] = EYE_OUTER;
  return Math.atan2(py(points, b) - py(points, a), px(points, b) - px(points, a));
}

/** Distance between the eye centres: the face scale used to normalise lengths. */
export function interocular(points: ArrayLike<number>): number {
  const lx = (px(points, EYE_OUTER[0]) + px(points, EYE_INNER[0])) / 2;
  const ly = (py(points, EYE_OUTER[0]) + py(points, EYE_INNER[0])) / 2;
  const rx = (px(points, EYE_OUTER[1]) + px(points, EYE_INNER[1])) / 2;
  const ry = (py(points, EYE_OUTER[1]) + py(points, EYE_INNER[1])) / 2;
  return Math.hypot(rx - lx, ry - ly);
}

/**
 * Mouth opening of a face: the mean gap between the inner lips over the three central columns,
 * divided by the inter-ocular distance (so it does not change when the mouth only widens, nor with the
 * face's size in the picture). 0 = closed.
 */
export function mouthOpening(points: ArrayLike<number>): number {
  const roll = rollAngle(points);
  const nx = -Math.sin(roll);
  const ny = Math.cos(roll);
  let gap = 0;
  for (const c of [3, 4, 5]) {
    const u = LIPS.upperInner[c];
    const l = LIPS.lowerInner[c + 1];
    gap += Math.max(0, (px(points, l) - px(points, u)) * nx + (py(points, l) - py(points, u)) * ny);
  }
  const scale = interocular(points);
  return scale > 0 ? gap / 3 / scale : 0;
}

/** Unit vector down the face at the mouth (perpendicular to the line through the inner mouth corners). */
export function mouthDown(points: ArrayLike<number>): [number, number] {
  const [a, b] = CORNER_INNER;
  const ex = px(points, b) - px(points, a);
  const ey = py(points, b) - py(points, a);
  const len = Math.hypot(ex, ey) || 1;
  return [-ey / len, ex / len];
}
