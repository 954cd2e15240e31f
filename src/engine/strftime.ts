const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

const pad = (value: number, width = 2) => String(value).padStart(width, "0");

/**
 * Python's `datetime.strftime` for the directives chat templates use (C locale, local time),
 * including glibc's `%-d`-style unpadded forms. Unknown directives are left as written.
 */
export function strftime(date: Date, format: string): string {
  return format.replace(/%(-?)([a-zA-Z%])/g, (match, unpadded: string, directive: string) => {
    const value = field(date, directive);
    if (value === undefined) return match;
    return unpadded ? value.replace(/^0+(?=\d)/, "") : value;
  });
}

function field(date: Date, directive: string): string | undefined {
  const hours = date.getHours();
  switch (directive) {
    case "Y":
      return String(date.getFullYear());
    case "y":
      return pad(date.getFullYear() % 100);
    case "m":
      return pad(date.getMonth() + 1);
    case "d":
      return pad(date.getDate());
    case "e":
      return String(date.getDate()).padStart(2, " ");
    case "H":
      return pad(hours);
    case "I":
      return pad(hours % 12 === 0 ? 12 : hours % 12);
    case "M":
      return pad(date.getMinutes());
    case "S":
      return pad(date.getSeconds());
    case "p":
      return hours < 12 ? "AM" : "PM";
    case "A":
      return DAYS[date.getDay()];
    case "a":
      return DAYS[date.getDay()]!.slice(0, 3);
    case "B":
      return MONTHS[date.getMonth()];
    case "b":
    case "h":
      return MONTHS[date.getMonth()]!.slice(0, 3);
    case "j":
      return pad(dayOfYear(date), 3);
    case "F":
      return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
    case "%":
      return "%";
    default:
      return undefined;
  }
}

function dayOfYear(date: Date): number {
  const start = new Date(date.getFullYear(), 0, 1);
  return Math.round((new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime() - start.getTime()) / 86_400_000) + 1;
}
