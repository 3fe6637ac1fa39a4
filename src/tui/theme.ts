/** Colors, or none under NO_COLOR (https://no-color.org). */
export interface Theme {
  color(name: string): string | undefined;
}

export const theme = (noColor: boolean): Theme => ({ color: (name) => (noColor ? undefined : name) });
