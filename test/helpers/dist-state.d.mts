export declare const DIST_ENTRY: string;
export declare function distState(root: string): { fresh: true } | { fresh: false; reason: string };
export declare const STUDIO_ENTRY: string;
