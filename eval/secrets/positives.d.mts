export function positives(): Array<{ format: string; text: string; secret: string }>;
