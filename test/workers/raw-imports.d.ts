/** Vite's `?raw` imports: a file's text (the docs drift tests compare committed pages). */
declare module "*.md?raw" {
  const text: string;
  export default text;
}
