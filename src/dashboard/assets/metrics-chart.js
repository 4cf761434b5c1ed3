// The metrics page's chart: the series in the element's data-chart attribute, drawn by uPlot
// (served beside this file), with times shown in the zone the page was asked for.
'use strict';

const COLORS = { sent: '#4b5563', delivered: '#15803d', bounced: '#b91c1c', complained: '#c2410c', opened: '#1d4ed8', clicked: '#7e22ce' };

// The time axis steps by whole periods (uPlot's own choice would label a daily chart at 08:00 and
// 16:00): hours, days, weeks (from the first period's Monday) or months, and their multiples.
const HOUR = 3600;
const DAY = 24 * HOUR;
const STEPS = {
  hourly: [HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY],
  daily: [DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 90 * DAY, 180 * DAY, 365 * DAY],
  weekly: [7 * DAY, 14 * DAY, 28 * DAY, 84 * DAY, 364 * DAY],
  monthly: [30 * DAY, 60 * DAY, 90 * DAY, 180 * DAY, 365 * DAY],
};

const element = document.getElementById('metrics-chart');
if (element && window.uPlot) {
  const { timezone, granularity, periods, series } = JSON.parse(element.dataset.chart);
  const names = Object.keys(series);
  const size = () => ({ width: Math.max(320, element.clientWidth), height: 320 });
  const plot = new uPlot(
    {
      ...size(),
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), timezone),
      series: [{}, ...names.map((name) => ({ label: name, stroke: COLORS[name], width: 2 }))],
      axes: [{ incrs: STEPS[granularity] }, {}],
      // The instants of the time axis's ticks, for whoever reads the page (its tests).
      hooks: { draw: [(u) => (element.dataset.ticks = JSON.stringify(u.axes[0]._splits ?? []))] },
    },
    [periods, ...names.map((name) => series[name])],
    element,
  );
  element.dataset.drawn = 'true';
  window.addEventListener('resize', () => plot.setSize(size()));
}
