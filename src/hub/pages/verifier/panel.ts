export async function startPanel(): Promise<void> {}
